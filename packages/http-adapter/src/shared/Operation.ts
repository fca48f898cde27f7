/**
 * How every endpoint of the contract is described: its access (a scope or `AnyValidKey`), a
 * summary and a description. The same values drive the scope check and the OpenAPI operation:
 * its security requirement names the scope, its description says it, and only the errors the
 * endpoint can really answer are listed (no 403 without a scope, no 422 without input).
 */
import * as Context from "effect/Context"
import type * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as OpenApi from "effect/http-api/OpenApi"
import { type Access, AnyValidKey, describeAccess, RequiredAccess } from "./Access.ts"
import { declaredAt, ValidationError } from "./HttpErrors.ts"

export interface OperationDoc {
  readonly access: Access
  readonly summary: string
  readonly description: string
}

// OpenAPI objects, typed as Effect's Transform annotation hands them over (plain JSON).
type Operation = Record<string, any>

const VALIDATION_REF = "#/components/schemas/ValidationErrorEncoded"

/** Path ids and `page` are integers, `sort` a string (their decoders take text or repeats, hence the fix-up). */
const integerParameters = (parameters: ReadonlyArray<Operation>) =>
  parameters.map((p) =>
    p.in === "path"
      ? { ...p, description: "The row's id (a positive integer).", schema: { type: "integer", minimum: 1 } }
      : p.in === "query" && p.name === "page"
      ? { ...p, description: "1-indexed page of 100 rows.", schema: { type: "integer", minimum: 1, default: 1 } }
      : p.in === "query" && p.name === "sort"
      ? { ...p, description: "A column, `-` for descending; anything else means the default order.", schema: { type: "string" } }
      : p
  )

/** The 422 as the endpoint declares it: without the decode-failure shape when it takes no input and does not declare it. */
const without422Validation = (response: Operation | undefined): Operation | undefined => {
  if (response === undefined) return undefined
  const media = response.content?.["application/json"]
  const refs: Array<Operation> = media?.schema?.anyOf ?? [media?.schema]
  const kept = refs.filter((s) => s?.$ref !== VALIDATION_REF)
  if (kept.length === 0) return undefined
  const descriptions = String(response.description).split(" | ").filter((d) => !d.startsWith("Request validation failed"))
  return {
    ...response,
    description: descriptions.join(" | "),
    content: { "application/json": { ...media, schema: kept.length === 1 ? kept[0] : { anyOf: kept } } }
  }
}

const transform = (doc: OperationDoc, declaresValidation: boolean) => (op: Operation): Operation => {
  const parameters = integerParameters(op.parameters ?? [])
  const takesInput = op.requestBody !== undefined || parameters.some((p) => p.in === "query")
  const responses: Record<string, Operation> = { ...op.responses }
  if (doc.access === AnyValidKey) delete responses["403"]
  if (!takesInput && !declaresValidation) {
    const kept = without422Validation(responses["422"])
    if (kept === undefined) delete responses["422"]
    else responses["422"] = kept
  }
  return {
    ...op,
    summary: doc.summary,
    description: `${doc.description}\n\n${describeAccess(doc.access)}`,
    parameters,
    security: [{ bearer: doc.access === AnyValidKey ? [] : [doc.access] }],
    responses
  }
}

/** Describes an endpoint: `HttpApiEndpoint.get(...).pipe(operation({ access, summary, description }))`. */
export const operation = (doc: OperationDoc) => <E extends HttpApiEndpoint.Constraint>(self: E): E => {
  // Every endpoint is a Top at run time; its precise type is the caller's E.
  const endpoint = self as unknown as HttpApiEndpoint.Top
  const declaresValidation = declaredAt(endpoint.error, ValidationError) !== -1
  const annotations = Context.merge(
    Context.make(RequiredAccess, doc.access),
    OpenApi.annotations({ transform: transform(doc, declaresValidation) })
  )
  // The same endpoint with more annotations.
  return endpoint.annotateMerge(annotations) as unknown as E
}
