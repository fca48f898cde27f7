/**
 * One endpoint of the contract as a router route: the request decoded against the endpoint's
 * schemas, its handler run, its success and declared errors encoded to JSON with their statuses.
 * It answers as `HttpApiBuilder` does for the JSON endpoints the contract declares, with fewer
 * steps a request: the decoders run synchronously, the middleware is applied once at start,
 * and a request adds nothing to its fiber's context (docs/architecture.md "What a request's
 * fiber holds"). An endpoint it cannot answer exactly (a body or response other than JSON, a
 * response with headers, a stream, an upgrade, a security middleware) stops the server at start.
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import * as SchemaIssue from "effect/SchemaIssue"
import * as HttpMethod from "effect/http/HttpMethod"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as Respondable from "effect/http/HttpServerRespondable"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as HttpApi from "effect/http-api/HttpApi"
import { HttpApiSchemaError } from "effect/http-api/HttpApiError"
import type * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiMiddleware from "effect/http-api/HttpApiMiddleware"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import { describeJsonSyntax } from "@chamber/core"

/** What the reflection of the contract says of one endpoint (`HttpApi.reflect`). */
export type Reflected = Parameters<Parameters<typeof HttpApi.reflect>[1]["onEndpoint"]>[0]

type Handler = (request: any) => Effect.Effect<unknown, unknown, unknown>
type Answer = Effect.Effect<HttpServerResponse.HttpServerResponse, any, any>

/** A response schema's encoding, where it states one (the annotation `HttpApiSchema.asText` and its kin set); JSON otherwise. */
const responseEncoding = SchemaAST.resolveAt<{ readonly _tag: string; readonly contentType: string }>("~httpApiEncoding")

/** Why an endpoint cannot be served by this module, or undefined. */
const unsupported = ({ endpoint, errors, middleware, successes }: Reflected): string | undefined => {
  for (const [contentType, { encoding }] of endpoint.payload) {
    if (contentType !== "application/json" || encoding._tag !== "Json") return `a ${contentType} body`
  }
  if ([...successes.values()].reduce((n, schemas) => n + schemas.length, 0) !== endpoint.success.size) return "a streamed or upgraded success"
  for (const schemas of [...successes.values(), ...errors.values()]) {
    for (const schema of schemas) {
      if (HttpApiSchema.isWithHeaders(schema)) return "a response with headers"
      const encoding = responseEncoding(schema.ast)
      if (encoding !== undefined && encoding._tag !== "Json") return `a ${encoding.contentType} response`
    }
  }
  for (const key of middleware) if (HttpApiMiddleware.isSecurity(key)) return "a security middleware"
  return undefined
}

/** A schema's decoder for one slot, with the parse options the contract gives that slot. */
const decoder = (schema: Schema.Top | undefined, options: SchemaAST.ParseOptions | undefined) =>
  schema === undefined ? undefined : Schema.decodeUnknownExit(schema as Schema.Codec<unknown, unknown>, options)

/** An encoded value as the JSON body of an answer: every route's and handler's JSON is written here. */
export const jsonText = (encoded: unknown, status = 200) =>
  HttpServerResponse.text(JSON.stringify(encoded), { status, contentType: "application/json" })

const json = (status: number, encoded: unknown, noContent: boolean) =>
  encoded === undefined || noContent ? HttpServerResponse.empty({ status }) : jsonText(encoded, status)

/** Encoders of a status map's schemas: the first schema whose type the value has encodes it. */
const encoders = (byStatus: Reflected["successes"], options: SchemaAST.ParseOptions | undefined) =>
  [...byStatus].flatMap(([status, schemas]) =>
    schemas.map((schema) => ({
      is: Schema.is(schema),
      encode: Schema.encodeUnknownExit(schema as Schema.Codec<unknown, unknown>, options),
      toResponse: (encoded: unknown) => json(status, encoded, HttpApiSchema.isNoContent(schema.ast))
    }))
  )

const respondWith = (list: ReturnType<typeof encoders>, value: unknown): HttpServerResponse.HttpServerResponse | undefined => {
  for (const { encode, is, toResponse } of list) {
    if (!is(value)) continue
    const encoded = encode(value)
    if (Exit.isSuccess(encoded)) return toResponse(encoded.value)
  }
  return undefined
}

/** A failed decode as HttpApiBuilder reports it, for the schema-error middleware (server/ValidationErrorsLive.ts). */
const schemaFailure = (kind: HttpApiSchemaError["kind"], exit: Exit.Failure<unknown, Schema.SchemaError>) => {
  const error = Cause.findError(exit.cause)
  return error._tag === "Success" ? Effect.fail(new HttpApiSchemaError({ kind, cause: error.success })) : Effect.failCause(error.failure)
}

const mediaType = (contentType: string) => {
  const normalized = contentType.toLowerCase().trim()
  const end = normalized.indexOf(";")
  return end === -1 ? normalized : normalized.slice(0, end).trim()
}

/** A body that is not JSON: what is wrong and where, as a 422 on `body` (docs/api.md "Errors"). */
const invalidJson = (text: string) =>
  new Schema.SchemaError(new SchemaIssue.InvalidValue({ message: `The body must be valid JSON: ${describeJsonSyntax(text)}.` }))

/**
 * The route of one endpoint of `group`, its handler wrapped in the endpoint's middleware, taken
 * from `middleware` (the group's build context) once, here.
 */
export const endpointRoute = (
  reflected: Reflected,
  handler: Handler,
  middleware: Context.Context<never>
): HttpRouter.Route<any, any> => {
  const { endpoint, group, mergedAnnotations } = reflected
  const why = unsupported(reflected)
  if (why !== undefined) throw new Error(`${group.identifier}.${endpoint.identifier}: ${why} is not served by server/EndpointRoute.ts`)
  const parse = (slot: Context.Key<any, SchemaAST.ParseOptions>) =>
    Context.getOrUndefined(mergedAnnotations, slot) ?? Context.getOrUndefined(mergedAnnotations, HttpApi.ParseOptions)

  const decodeParams = decoder(endpoint.params, parse(HttpApi.ParamsParseOptions))
  const decodeQuery = decoder(endpoint.query && Schema.toCodecArrayFromSingle(endpoint.query), parse(HttpApi.QueryParseOptions))
  const decodeHeaders = decoder(endpoint.headers, parse(HttpApi.HeadersParseOptions))
  const payload = endpoint.payload.get("application/json")
  const decodePayload = decoder(payload && Schema.Union(payload.schemas), parse(HttpApi.PayloadParseOptions))
  const nullOnEmpty = payload?.schemas.some((s) => SchemaAST.isNull(SchemaAST.toEncoded(s.ast))) ?? false
  const successes = encoders(reflected.successes, parse(HttpApi.SuccessParseOptions))
  const errors = encoders(reflected.errors, parse(HttpApi.ErrorParseOptions))

  const succeed = (value: unknown): Answer => {
    if (HttpServerResponse.isHttpServerResponse(value)) return Effect.succeed(value)
    const response = respondWith(successes, value)
    return response === undefined
      ? Effect.die(new Error(`${group.identifier}.${endpoint.identifier}: the handler's value fits none of the endpoint's success schemas`))
      : Effect.succeed(response)
  }
  const answer = (request: Record<string, unknown>): Answer => Effect.flatMap(handler(request), succeed)

  const withPayload = (httpRequest: HttpServerRequest.HttpServerRequest, request: Record<string, unknown>): Answer => {
    const contentType = HttpMethod.hasBody(httpRequest.method)
      ? mediaType(httpRequest.headers["content-type"] ?? "application/json")
      : "application/x-www-form-urlencoded"
    if (contentType !== "application/json") {
      return Effect.succeed(HttpServerResponse.text(`Unsupported content-type: ${contentType}`, { status: 415 }))
    }
    return Effect.flatMap(Effect.orDie(httpRequest.text), (text): Answer => {
      let body: unknown
      try {
        body = text === "" ? (nullOnEmpty ? null : undefined) : JSON.parse(text)
      } catch {
        return Effect.fail(new HttpApiSchemaError({ kind: "Payload", cause: invalidJson(text) }))
      }
      const decoded = decodePayload!(body)
      if (Exit.isFailure(decoded)) return schemaFailure("Payload", decoded)
      request.payload = decoded.value
      return answer(request)
    })
  }

  const decoded: Answer = Effect.withFiber((fiber): Answer => {
    const httpRequest = Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)
    const request: Record<string, unknown> = { request: httpRequest, endpoint, group }
    if (decodeParams !== undefined) {
      const exit = decodeParams(Context.getUnsafe(fiber.context, HttpRouter.RouteContext).params)
      if (Exit.isFailure(exit)) return schemaFailure("Params", exit)
      request.params = exit.value
    }
    if (decodeHeaders !== undefined) {
      const exit = decodeHeaders(httpRequest.headers)
      if (Exit.isFailure(exit)) return schemaFailure("Headers", exit)
      request.headers = exit.value
    }
    if (decodeQuery !== undefined) {
      const exit = decodeQuery(Context.getUnsafe(fiber.context, HttpServerRequest.ParsedSearchParams))
      if (Exit.isFailure(exit)) return schemaFailure("Query", exit)
      request.query = exit.value
    }
    return decodePayload === undefined ? answer(request) : withPayload(httpRequest, request)
  })

  let wrapped: Answer = decoded
  for (const key of endpoint.middlewares) {
    const apply = Context.getUnsafe(middleware, key as HttpApiMiddleware.AnyService) as HttpApiMiddleware.HttpApiMiddleware<any, any, any>
    wrapped = apply(wrapped, { endpoint, group }) as Answer
  }

  const failed = (error: unknown): Answer => {
    if (HttpApiSchemaError.is(error)) return Effect.die(error)
    const response = respondWith(errors, error)
    if (response !== undefined) return Effect.succeed(response)
    return Respondable.isRespondable(error) ? Respondable.toResponse(error) : Effect.die(error)
  }
  return HttpRouter.route(endpoint.method, endpoint.path as HttpRouter.PathInput, Effect.catch(wrapped, failed))
}

/** The contract's endpoints of `group`, reflected, by identifier. */
export const reflectGroup = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>,
  identifier: string
): Map<string, Reflected> => {
  const found = new Map<string, Reflected>()
  HttpApi.reflect(api, {
    predicate: (options) => options.group.identifier === identifier,
    onGroup() {},
    onEndpoint: (reflected) => void found.set(reflected.endpoint.identifier, reflected)
  })
  return found
}

