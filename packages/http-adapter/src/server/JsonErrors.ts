/**
 * Every error JSON (docs/api.md "Errors"), whatever part of the stack answered: an unknown path
 * 404, a wrong method 405 (with Allow), a body over 1 MiB 413, another content type 415; and the
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
import * as HttpApi from "effect/http-api/HttpApi"
import type * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import type { DatabaseFailures } from "@chamber/core"
import { statusMessages } from "../shared/HttpErrors.ts"
import type { LimiterBeforeRouting } from "./RateLimiting.ts"
import { lacksHost } from "./RawRequest.ts"

export const MAX_BODY_BYTES = 1024 * 1024

const errorResponse = (status: number, headers?: Record<string, string>) =>
  HttpServerResponse.jsonUnsafe({ message: statusMessages[status] ?? "Error." }, { status, headers })

/** Seconds a client is asked to wait while the database does not answer: a restart of PostgreSQL takes about that. */
const RETRY_AFTER_OUTAGE_SECONDS = 2

const outageResponse = () => errorResponse(503, { "retry-after": String(RETRY_AFTER_OUTAGE_SECONDS) })

const isJson = (response: HttpServerResponse.HttpServerResponse) =>
  (response.headers["content-type"] ?? ("contentType" in response.body ? response.body.contentType ?? "" : "")).includes("json")

const DIGITS = /^\d+$/

/**
 * Method and path pattern of every endpoint of `api`, to tell a 405 from a 404. No literal
 * segment of a path may be all digits (refused at start): an all-digit segment of a request
 * then matches a path id and nothing else, whatever its digits (`shapeOf`).
 */
const routesOf = <Id extends string, Groups extends HttpApiGroup.Constraint>(api: HttpApi.HttpApi<Id, Groups>) => {
  const routes: Array<{ readonly method: string; readonly pattern: RegExp; readonly literals: number }> = []
  HttpApi.reflect(api, {
    onGroup() {},
    onEndpoint({ endpoint }) {
      const pattern = endpoint.path.replace(/:[A-Za-z_]+/g, "[^/]+")
      const literals = endpoint.path.split("/").filter((s) => s !== "" && !s.startsWith(":"))
      if (literals.some((s) => DIGITS.test(s))) throw new Error(`${endpoint.method} ${endpoint.path}: a literal segment of all digits would defeat server/JsonErrors.ts's shapes`)
      routes.push({ method: endpoint.method, pattern: new RegExp(`^${pattern}$`), literals: literals.length })
    }
  })
  return routes
}

/** A path with each all-digit segment (a row id) as `0`: paths of one shape have the same endpoints. */
const shapeOf = (path: string) => path.replace(/\/\d+(?=\/|$)/g, "/0")

/** The 1 MiB limit tripped while the body was read (a chunked body has no content-length to check first). */
const tooLarge = (error: unknown) =>
  error instanceof HttpServerError.HttpServerError && error.reason._tag === "RequestParseError" && error.reason.reason === "BodyTooLarge"

/** The body could not be read as sent (a broken chunk, a connection cut mid-body): the client's fault. */
const unreadable = (error: unknown) =>
  error instanceof HttpServerError.HttpServerError && error.reason._tag === "RequestParseError"

const routeNotFound = (error: unknown) =>
  error instanceof HttpServerError.HttpServerError && error.reason._tag === "RouteNotFound"

/** How many shapes of paths have their methods kept (each a short string and a small array). */
const KNOWN_PATHS = 4096

/** The characters of a canonical path: an API path is ASCII letters, digits and `/._~-`. */
const NOT_CANONICAL = /[^A-Za-z0-9/._~-]/

/** The path of a request URL, as sent. */
const pathOf = (url: string) => {
  const end = url.indexOf("?")
  return end === -1 ? url : url.slice(0, end)
}

/**
 * Wraps the router's app: answers every failure itself, so nothing is left unhandled. What is
 * answered before any endpoint is reached passes through `beforeRouting` (server/RateLimiting.ts).
 */
export const jsonErrors = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>,
  beforeRouting: LimiterBeforeRouting,
  failures: DatabaseFailures["Service"]
) => {
  const routes = routesOf(api)
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
  /**
   * The methods of the endpoints `path` names; as the router does, a literal segment wins over a
   * path id. HEAD is one wherever GET is: the router serves it with the GET route, and Node sends
   * the answer without its body (RFC 9110, section 9.3.2).
   */
  const methodsOfUncached = (path: string): ReadonlyArray<string> => {
    const matching = routes.filter((r) => r.pattern.test(path))
    const best = Math.max(...matching.map((r) => r.literals))
    const methods = matching.filter((r) => r.literals === best).map((r) => r.method)
    return methods.includes("GET") ? [...methods, "HEAD"] : methods
  }
  // Every request asks: the answers for recent shapes of paths are kept (a bounded number of
  // them), so a path with a row id not seen before (each new invoice's) does not scan the routes.
  const known = new Map<string, ReadonlyArray<string>>()
  const methodsOf = (path: string) => {
    const shape = shapeOf(path)
    let methods = known.get(shape)
    if (methods === undefined) {
      if (known.size >= KNOWN_PATHS) known.clear()
      known.set(shape, methods = methodsOfUncached(shape))
    }
    return methods
  }
  const wrongMethod = (methods: ReadonlyArray<string>) => errorResponse(405, { allow: [...new Set(methods)].join(", ") })
  const notFoundOrWrongMethod = (request: HttpServerRequest.HttpServerRequest) => {
    const methods = methodsOf(pathOf(request.url))
    return methods.length > 0 && !methods.includes(request.method) ? wrongMethod(methods) : errorResponse(404)
  }
  const afterApp = (request: HttpServerRequest.HttpServerRequest) => (response: HttpServerResponse.HttpServerResponse) => {
    if (response.status === 401) return HttpServerResponse.setHeader(response, "www-authenticate", "Bearer")
    if (response.status < 400 || isJson(response)) return response
    if (response.status === 404) return notFoundOrWrongMethod(request)
    return errorResponse(response.status, response.status === 413 ? { connection: "close" } : undefined)
  }
  return <E, R>(request: HttpServerRequest.HttpServerRequest, app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) => {
    if (lacksHost(request)) return beforeRouting(request, errorResponse(400, { connection: "close" }))
    const path = pathOf(request.url)
    if (NOT_CANONICAL.test(path)) return counted(request, errorResponse(404))
    // A known path with another method is a 405 even where a path id would match (PATCH /members/search).
    const methods = methodsOf(path)
    if (methods.length > 0 && !methods.includes(request.method)) return counted(request, wrongMethod(methods))
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
