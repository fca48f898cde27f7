/**
 * Every error JSON (docs/api.md "Errors"), whatever part of the stack answered: an unknown path
 * 404, a wrong method 405 (with Allow), both told by the route index (server/RouteIndex.ts), a body over 1 MiB 413, another content type 415; and the
 * 1 MiB limit itself. Only canonical paths reach the router: it would decode `%` escapes and cut
 * a segment at `;`, so a path with either, or any character an API path never has, is a 404
 * (docs/api.md "Hostile and odd requests"). A 401 names its scheme (`WWW-Authenticate: Bearer`).
 * A failure the database's adapter names an outage is a 503 with `Retry-After` (ruling 27), even
 * where the answer would have been one of the above (a key counted for a 404 is looked up first).
 */
import * as ByteSize from "effect/ByteSize"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as HttpIncomingMessage from "effect/http/HttpIncomingMessage"
import * as HttpServerError from "effect/http/HttpServerError"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import type { DatabaseFailures } from "@chamber/core"
import { statusMessages } from "../shared/HttpErrors.ts"
import type { LimiterBeforeRouting } from "./RateLimiting.ts"
import { lacksHost } from "./RawRequest.ts"
import { canonicalPath, type RouteIndex } from "./RouteIndex.ts"

export const MAX_BODY_BYTES = 1024 * 1024

const errorResponse = (status: number, headers?: Record<string, string>) =>
  HttpServerResponse.jsonUnsafe({ message: statusMessages[status] ?? "Error." }, { status, headers })

/** Seconds a client is asked to wait while the database does not answer: a restart of PostgreSQL takes about that. */
const RETRY_AFTER_OUTAGE_SECONDS = 2

const outageResponse = () => errorResponse(503, { "retry-after": String(RETRY_AFTER_OUTAGE_SECONDS) })

const isJson = (response: HttpServerResponse.HttpServerResponse) =>
  (response.headers["content-type"] ?? ("contentType" in response.body ? response.body.contentType ?? "" : "")).includes("json")

/** The 1 MiB limit tripped while the body was read (a chunked body has no content-length to check first). */
const tooLarge = (error: unknown) =>
  error instanceof HttpServerError.HttpServerError && error.reason._tag === "RequestParseError" && error.reason.reason === "BodyTooLarge"

/** The body could not be read as sent (a broken chunk, a connection cut mid-body): the client's fault. */
const unreadable = (error: unknown) =>
  error instanceof HttpServerError.HttpServerError && error.reason._tag === "RequestParseError"

const routeNotFound = (error: unknown) =>
  error instanceof HttpServerError.HttpServerError && error.reason._tag === "RouteNotFound"

/**
 * Wraps the router's app: answers every failure itself, so nothing is left unhandled. What is
 * answered before any endpoint is reached passes through `beforeRouting` (server/RateLimiting.ts).
 */
export const jsonErrors = (
  routes: RouteIndex,
  beforeRouting: LimiterBeforeRouting,
  failures: DatabaseFailures["Service"]
) => {
  /** The outage among the cause's failures and defects, if any. */
  const outageOf = (cause: Cause.Cause<unknown>) => {
    for (const reason of cause.reasons) {
      const found = Cause.isDieReason(reason) ? failures.unavailable(reason.defect) : Cause.isFailReason(reason) ? failures.unavailable(reason.error) : undefined
      if (found !== undefined) return found
    }
    return undefined
  }
  /** A failure nothing else explains: 503 for an outage, else 500; either is logged. */
  const unexplained = (cause: Cause.Cause<unknown>) => {
    const outage = outageOf(cause)
    return outage === undefined
      ? Effect.logError("unhandled request failure", cause).pipe(Effect.as(errorResponse(500)))
      : Effect.logWarning("the database does not answer", outage.reason).pipe(Effect.as(outageResponse()))
  }
  /** What `beforeRouting` answers for a request answered before any endpoint, or 503 while the key cannot be looked up. */
  const counted = (request: HttpServerRequest.HttpServerRequest, response: HttpServerResponse.HttpServerResponse) =>
    Effect.catchCause(beforeRouting(request, response), unexplained)
  /** The 405 of a contract's path with another method (`allow` is its methods). */
  const wrongMethod = (allow: string) => errorResponse(405, { allow })
  const notFoundOrWrongMethod = (request: HttpServerRequest.HttpServerRequest) => {
    const route = routes(request.url)
    return route?.allow !== undefined && !route.methods.has(request.method) ? wrongMethod(route.allow) : errorResponse(404)
  }
  const afterApp = (request: HttpServerRequest.HttpServerRequest) => (response: HttpServerResponse.HttpServerResponse) => {
    if (response.status === 401) return HttpServerResponse.setHeader(response, "www-authenticate", "Bearer")
    if (response.status < 400 || isJson(response)) return response
    if (response.status === 404) return notFoundOrWrongMethod(request)
    return errorResponse(response.status, response.status === 413 ? { connection: "close" } : undefined)
  }
  return <E, R>(request: HttpServerRequest.HttpServerRequest, app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) => {
    if (lacksHost(request)) return beforeRouting(request, errorResponse(400, { connection: "close" }))
    if (canonicalPath(request.url) === undefined) return counted(request, errorResponse(404))
    // A known path with another method is a 405 even where a path id would match (PATCH /members/search).
    const route = routes(request.url)
    if (route?.allow !== undefined && !route.methods.has(request.method)) return counted(request, wrongMethod(route.allow))
    if (Number(request.headers["content-length"] ?? 0) > MAX_BODY_BYTES) return counted(request, errorResponse(413, { connection: "close" }))
    const after = afterApp(request)
    const recovered = (cause: Cause.Cause<E>) => {
      // A client that went away: nobody to answer and nothing to report.
      if (Cause.hasInterruptsOnly(cause)) return Effect.succeed(HttpServerResponse.empty({ status: 499 }))
      const failure = Cause.squash(cause)
      if (routeNotFound(failure)) return counted(request, notFoundOrWrongMethod(request))
      if (tooLarge(failure)) return Effect.succeed(errorResponse(413, { connection: "close" }))
      if (unreadable(failure)) return Effect.succeed(errorResponse(400, { connection: "close" }))
      return unexplained(cause)
    }
    // One step for the answer either way: the success's own, the failure's once recovered.
    return Effect.matchCauseEffect(app, {
      onSuccess: (response) => Effect.succeed(after(response)),
      onFailure: (cause) => Effect.map(recovered(cause), after)
    })
  }
}

/** The 1 MiB limit on every request body, for the whole server: each request's fiber inherits it. */
export const MaxBodySizeLive = Layer.succeed(HttpIncomingMessage.MaxBodySize)(ByteSize.bytes(MAX_BODY_BYTES))
