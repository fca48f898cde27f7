/**
 * The HTTP server: the contract's routes with their handlers, the OpenAPI document and docs
 * page, and one global layer that keeps every error JSON (unknown path 404, wrong method 405,
 * oversized body 413, wrong content type 415) whatever part of the stack answered.
 */
import { Cause, Effect, Layer } from "effect"
import { HttpIncomingMessage, HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiBuilder, HttpApiScalar } from "effect/http-api"
import { Api } from "./Api.ts"
import { MeHandlers } from "./me/MeHandlers.ts"
import { MembersHandlers } from "./members/MembersHandlers.ts"
import { AuthenticationLive } from "./shared/Authentication.ts"
import { statusMessages } from "./shared/HttpErrors.ts"
import { ValidationErrorsLive } from "./shared/ValidationErrors.ts"

export const MAX_BODY_BYTES = 1024 * 1024

/** Method and path pattern of every endpoint, to tell a 405 from a 404. */
const routes = Object.values(Api.groups).flatMap((group: any) =>
  Object.values(group.endpoints).map((endpoint: any) => ({
    method: endpoint.method as string,
    pattern: new RegExp("^" + String(endpoint.path).replace(/:[A-Za-z_]+/g, "[^/]+").replace(/\/$/, "") + "/?$")
  }))
)

const errorResponse = (status: number, headers?: Record<string, string>) =>
  HttpServerResponse.jsonUnsafe({ message: statusMessages[status] ?? "Error." }, { status, headers })

const isJson = (response: HttpServerResponse.HttpServerResponse) =>
  (response.headers["content-type"] ?? (response.body as any).contentType ?? "").includes("json")

const notFoundOrWrongMethod = (request: HttpServerRequest.HttpServerRequest) => {
  const path = request.url.split("?")[0] ?? "/"
  const methods = routes.filter((r) => r.pattern.test(path)).map((r) => r.method)
  return methods.length > 0 && !methods.includes(request.method)
    ? errorResponse(405, { allow: [...new Set(methods)].join(", ") })
    : errorResponse(404)
}

/** The body outgrew `MaxBodySize` while it was read (a chunked body has no content-length to check first). */
const tooLarge = (failure: any) => failure?.reason?._tag === "RequestParseError" && failure.reason.reason === "BodyTooLarge"

/** Keeps every error JSON and enforces the 1 MiB body limit. */
export const JsonErrors = HttpRouter.middleware(
  ((app: Effect.Effect<HttpServerResponse.HttpServerResponse, unknown>) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      if (Number(request.headers["content-length"] ?? 0) > MAX_BODY_BYTES) return errorResponse(413, { connection: "close" })
      const response = yield* app.pipe(
        Effect.provideService(HttpIncomingMessage.MaxBodySize, MAX_BODY_BYTES as any),
        Effect.catchCause((cause) => {
          // A client that went away: nobody to answer and nothing to report.
          if (Cause.hasInterruptsOnly(cause)) return Effect.succeed(HttpServerResponse.empty({ status: 499 }))
          const failure = Cause.squash(cause) as any
          if (failure?._tag === "RouteNotFound" || failure?.reason?._tag === "RouteNotFound") return Effect.succeed(notFoundOrWrongMethod(request))
          if (tooLarge(failure)) return Effect.succeed(errorResponse(413, { connection: "close" }))
          return Effect.logError("unhandled request failure", cause).pipe(Effect.as(errorResponse(500)))
        })
      )
      if (response.status < 400 || isJson(response)) return response
      if (response.status === 404) return notFoundOrWrongMethod(request)
      return errorResponse(response.status, response.status === 413 ? { connection: "close" } : undefined)
    })) as any,
  { global: true }
) as Layer.Layer<never, never, HttpRouter.HttpRouter>

/** Every group's handlers with the middleware they consume. */
export const HandlersLive = Layer.mergeAll(MeHandlers, MembersHandlers).pipe(
  Layer.provide([AuthenticationLive, ValidationErrorsLive])
)

/** Routes, OpenAPI at /api/v1/openapi.json, docs at /docs. Needs the core services. */
export const ApiRoutes = Layer.mergeAll(
  HttpApiBuilder.layer(Api, { openapiPath: "/api/v1/openapi.json" }).pipe(Layer.provide(HandlersLive)),
  HttpApiScalar.layer(Api, { path: "/docs" }),
  JsonErrors
)

/** The served application (no listener): provide an HttpServer to run it. */
export const HttpLive = HttpRouter.serve(ApiRoutes, { disableLogger: true, disableListenLog: true })
