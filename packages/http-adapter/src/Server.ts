/**
 * The HTTP server: the contract's routes with their handlers, checked before they serve
 * (server/ContractCheck.ts), the OpenAPI document and docs page, and JSON for every error.
 * Adding a resource adds its handlers to `HandlersLive` (docs/architecture.md "Adding a resource").
 */
import { Layer } from "effect"
import { HttpRouter } from "effect/http"
import { type HttpApi, HttpApiBuilder, type HttpApiGroup, HttpApiScalar } from "effect/http-api"
import { Api } from "./Api.ts"
import { MeHandlers } from "./me/MeHandlers.ts"
import { MembersHandlers } from "./members/MembersHandlers.ts"
import { AuthenticationLive } from "./server/AuthenticationLive.ts"
import { checkContract } from "./server/ContractCheck.ts"
import { jsonErrors } from "./server/JsonErrors.ts"
import { ValidationErrorsLive } from "./server/ValidationErrorsLive.ts"

export { MAX_BODY_BYTES } from "./server/JsonErrors.ts"

/** Every group's handlers with the middleware they consume. */
export const HandlersLive = Layer.mergeAll(MeHandlers, MembersHandlers).pipe(
  Layer.provide([AuthenticationLive, ValidationErrorsLive])
)

/**
 * The routes of `api` with its handlers, OpenAPI at /api/v1/openapi.json, docs at /docs, JSON
 * errors; refused at start when the contract is incomplete.
 */
export const serveApi = <Id extends string, Groups extends HttpApiGroup.Constraint, E, R>(
  api: HttpApi.HttpApi<Id, Groups>,
  handlers: Layer.Layer<HttpApiGroup.ToService<Id, Groups>, E, R>
) =>
  Layer.mergeAll(
    HttpApiBuilder.layer(api, { openapiPath: "/api/v1/openapi.json" }).pipe(Layer.provide(handlers)),
    HttpApiScalar.layer(api, { path: "/docs" }),
    jsonErrors(api)
  ).pipe(Layer.provide(Layer.effectDiscard(checkContract(api))))

/** The product's routes. Needs the core services. */
export const ApiRoutes = serveApi(Api, HandlersLive)

/**
 * The served application (no listener): provide an HttpServer (server/NodeServer.ts) to run it.
 * Paths match exactly as written: case, trailing and doubled slashes count.
 */
export const HttpLive = HttpRouter.serve(ApiRoutes, {
  disableLogger: true,
  disableListenLog: true,
  routerConfig: { caseSensitive: true, ignoreTrailingSlash: false, ignoreDuplicateSlashes: false }
})
