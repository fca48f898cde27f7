/**
 * What the parsed request hides and the API still answers for (docs/api.md "Errors"): Node
 * keeps only the first of several Authorization headers, decodes a body's invalid UTF-8 into
 * U+FFFD without a word, is told not to refuse an HTTP/1.1 request without Host itself, and
 * reads an empty JSON body as a null.
 */
import * as Effect from "effect/Effect"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import { IncomingMessage } from "node:http"
import { ValidationError } from "../shared/HttpErrors.ts"

/** An HTTP/1.1 request without Host, which RFC 9112 (section 3.2) answers with a 400. */
export const lacksHost = (request: HttpServerRequest.HttpServerRequest): boolean =>
  request.headers.host === undefined && request.source instanceof IncomingMessage && request.source.httpVersion === "1.1"

/** How many Authorization headers the request carried (Node's parsed headers keep only the first). */
export const authorizationHeaders = (request: HttpServerRequest.HttpServerRequest): number => {
  const source = request.source
  if (!(source instanceof IncomingMessage)) return request.headers["authorization"] === undefined ? 0 : 1
  let count = 0
  for (let i = 0; i < source.rawHeaders.length; i += 2) {
    if (source.rawHeaders[i]!.toLowerCase() === "authorization") count++
  }
  return count
}

/**
 * The credential of an `Authorization: Bearer <credential>` header: the scheme in any case,
 * then one or more spaces (RFC 9110, section 11.1), as the framework's bearer scheme reads it
 * for an endpoint (shared/Access.ts). Here for the answers given before any endpoint is reached.
 */
const bearerCredential = (authorization: string | undefined): string | undefined => {
  if (authorization === undefined || authorization.length <= 6 || authorization.charCodeAt(6) !== 32) return undefined
  if (authorization.slice(0, 6).toLowerCase() !== "bearer") return undefined
  let start = 7
  while (authorization.charCodeAt(start) === 32) start++
  return start === authorization.length ? undefined : authorization.slice(start)
}

/** The bearer credential of the request's only Authorization header; none with two (which would count?), as for an endpoint. */
export const soleBearer = (request: HttpServerRequest.HttpServerRequest): string | undefined =>
  authorizationHeaders(request) > 1 ? undefined : bearerCredential(request.headers.authorization)

const utf8 = new TextDecoder("utf-8", { fatal: true })
const notUtf8 = ValidationError.of({ body: ["The body must be valid UTF-8 text."] })

const hasJsonBody = (request: HttpServerRequest.HttpServerRequest) =>
  (request.headers["content-type"] ?? "").toLowerCase().includes("json") &&
  (request.headers["transfer-encoding"] !== undefined || Number(request.headers["content-length"] ?? 0) > 0)

/**
 * A 422 on `body` when a JSON body's bytes are not UTF-8. The body is read once and kept, so
 * the decoding that follows reads it again for free; a failure to read it (over 1 MiB, say)
 * is left to the global error handling.
 */
export const requireUtf8Body = (request: HttpServerRequest.HttpServerRequest): Effect.Effect<void, ValidationError> =>
  hasJsonBody(request)
    ? Effect.flatMap(Effect.orDie(request.arrayBuffer), (bytes) => {
      try {
        utf8.decode(bytes)
        return Effect.void
      } catch {
        return Effect.fail(notUtf8)
      }
    })
    : Effect.void

const notAnObject = ValidationError.of({ body: ["The body must be a JSON object."] })

/**
 * The payload of an endpoint whose body may be left out (`optionalBody` of shared/Operation.ts,
 * its payload schemas the object and null): the decoder reads an empty body as null, so the text
 * tells them apart. No body (none, or an empty one) is `empty`; a JSON `null` is the 422 every
 * other endpoint answers.
 */
export const bodyOrEmpty = <A>(request: HttpServerRequest.HttpServerRequest, payload: A | null, empty: A): Effect.Effect<A, ValidationError> =>
  payload !== null
    ? Effect.succeed(payload)
    : Effect.flatMap(Effect.orDie(request.text), (text) => (text === "" ? Effect.succeed(empty) : Effect.fail(notAnObject)))
