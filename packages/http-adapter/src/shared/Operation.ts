/**
 * How every endpoint of the contract is described: its access (a scope or `AnyValidKey`), a
 * summary and a description. The same values drive the scope check and the OpenAPI operation:
 * its security requirement names the scope, its description says it, and only the errors the
 * endpoint can really answer are listed (no 403 without a scope, no 422 without input).
 */
import * as Context from "effect/Context"
import * as SchemaAST from "effect/SchemaAST"
import type * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as OpenApi from "effect/http-api/OpenApi"
import { type Access, AnyValidKey, describeAccess, RequiredAccess, scopesOf } from "./Access.ts"
import { declaredAt, ValidationError } from "./HttpErrors.ts"

export interface OperationDoc {
  readonly access: Access
  readonly summary: string
  readonly description: string
  /** The columns its `sort` parameter knows (each also with `-`), offered to clients; any other value means the default order. */
  readonly sort?: ReadonlyArray<string>
  /**
   * The body may be left out (no body, or an empty one), meaning `{}`: the payload schema takes
   * `undefined` besides its object, and the document states the object with `required: false`.
   */
  readonly optionalBody?: boolean
  /** What the document states of a query parameter beyond its decoder (its form, its values), by name. */
  readonly query?: Readonly<Record<string, Record<string, unknown>>>
}

// OpenAPI objects, typed as Effect's Transform annotation hands them over (plain JSON).
type Operation = Record<string, any>

const VALIDATION_REF = "#/components/schemas/ValidationErrorEncoded"

/** What each query parameter of the contract is, for its description. */
const QUERY_DESCRIPTIONS: Record<string, string> = {
  status: "Only rows of this status.",
  email: "An email address, matched exactly and case-insensitively.",
  name: "Part of the name, matched case-insensitively.",
  updated_since:
    "Only rows whose `updated_at` is at or after this moment: an RFC 3339 date-time with its offset (2026-03-01T00:00:00Z), " +
    "years 0001 to 9999; anything else answers 422. For incremental sync, with `sort=updated_at`."
}

/**
 * `sort`: the endpoint's own values offered (`anyOf` their enum and a plain string), while any
 * other string stays valid: the server answers it in the default order, never a 422.
 */
const sortParameter = (p: Operation, columns: ReadonlyArray<string> | undefined): Operation => {
  const values = columns?.flatMap((c) => [c, `-${c}`]) ?? []
  return {
    ...p,
    description: values.length === 0
      ? "A column, `-` for descending; anything else means the default order."
      : `One of ${values.map((v) => `\`${v}\``).join(", ")} (\`-\` for descending); any other value is ignored and the default order applies.`,
    schema: values.length === 0 ? { type: "string" } : { anyOf: [{ type: "string", enum: values }, { type: "string" }] }
  }
}

/**
 * Path ids and `page` are integers of at least 1 with no upper bound (ruling 26: any larger one is
 * a 404, or an empty page), `sort` a string (their decoders take text or repeats, hence the fix-up).
 */
const describedParameters = (parameters: ReadonlyArray<Operation>, doc: OperationDoc) =>
  parameters.map((p) =>
    p.in === "query" && doc.query?.[p.name] !== undefined
      ? { ...p, ...doc.query[p.name] }
      : p.in === "path"
      ? { ...p, description: "The row's id (a positive integer).", schema: { type: "integer", minimum: 1 } }
      : p.in === "query" && p.name === "page"
      ? { ...p, description: "1-indexed page of 100 rows; a page past the last answers `data: []`.", schema: { type: "integer", minimum: 1, default: 1 } }
      : p.in === "query" && p.name === "sort"
      ? sortParameter(p, doc.sort)
      : p.in === "query" && p.description === undefined && QUERY_DESCRIPTIONS[p.name] !== undefined
      ? { ...p, description: QUERY_DESCRIPTIONS[p.name] }
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

/** An optional body: its object alone (the `undefined` the payload also takes is no JSON, not `null`), not required. */
const optionalBody = (body: Operation | undefined): Operation | undefined => {
  if (body === undefined) throw new Error("optionalBody on an operation without a body")
  const content = Object.fromEntries(Object.entries(body.content as Operation).map(([type, media]) => {
    const branches: Array<Operation> | undefined = media.schema?.anyOf
    const kept = branches?.filter((b) => b.type !== "null")
    return [type, kept === undefined ? media : { ...media, schema: kept.length === 1 ? kept[0] : { anyOf: kept } }]
  }))
  return { ...body, content, required: false }
}

const transform = (doc: OperationDoc, declaresValidation: boolean) => (op: Operation): Operation => {
  const parameters = describedParameters(op.parameters ?? [], doc)
  const requestBody = doc.optionalBody === true ? optionalBody(op.requestBody) : op.requestBody
  const takesInput = requestBody !== undefined || parameters.some((p) => p.in === "query")
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
    ...(requestBody === undefined ? {} : { requestBody }),
    // Any one of several scopes opens it: one requirement each (OpenAPI's "or").
    security: doc.access === AnyValidKey ? [{ bearer: [] }] : scopesOf(doc.access).map((s) => ({ bearer: [s] })),
    responses
  }
}

/** Describes an endpoint: `HttpApiEndpoint.get(...).pipe(operation({ access, summary, description }))`. */
export const operation = (doc: OperationDoc) => <E extends HttpApiEndpoint.Constraint>(self: E): E => {
  // Every endpoint is a Top at run time; its precise type is the caller's E.
  const endpoint = self as unknown as HttpApiEndpoint.Top
  const declaresValidation = declaredAt(endpoint.error, ValidationError) !== -1
  if (doc.optionalBody === true && ![...endpoint.payload.values()].some((p) => p.schemas.some((s) => SchemaAST.isNull(SchemaAST.toEncoded(s.ast))))) {
    throw new Error(`${endpoint.name}: an optional body takes null besides its object (the decoder's empty body; server/RawRequest.ts bodyOrEmpty)`)
  }
  const annotations = Context.merge(
    Context.make(RequiredAccess, doc.access),
    OpenApi.annotations({ transform: transform(doc, declaresValidation) })
  )
  // The same endpoint with more annotations.
  return endpoint.annotateMerge(annotations) as unknown as E
}
