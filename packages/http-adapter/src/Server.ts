/**
 * The HTTP server: the contract's routes with their handlers, checked before they serve
 * (server/ContractCheck.ts), the OpenAPI document and docs page, and JSON for every error.
 * Its handlers are those `Api.ts` `Groups` names (docs/architecture.md "Adding a resource").
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import { identity } from "effect/Function"
import * as Layer from "effect/Layer"
import * as References from "effect/References"
import * as Scope from "effect/Scope"
import * as Tracer from "effect/Tracer"
import type * as Types from "effect/Types"
import * as HttpRouter from "effect/http/HttpRouter"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import type * as HttpApi from "effect/http-api/HttpApi"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import type * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import { DatabaseFailures } from "@chamber/core"
import { Api, Groups } from "./Api.ts"
import { AuthenticationLive } from "./server/AuthenticationLive.ts"
import { checkContract } from "./server/ContractCheck.ts"
import { compressingDocs } from "./server/DocsCompression.ts"
import { HEALTH_PATHS, HealthRoutes } from "./server/Health.ts"
import { jsonErrors, MaxBodySizeLive } from "./server/JsonErrors.ts"
import { idempotentLive, IdempotencyPruning } from "./server/Idempotency.ts"
import { lazyDocs } from "./server/LazyDocs.ts"
import { makeLimiterBeforeRouting } from "./server/RateLimiting.ts"
import { withRequestLog } from "./server/RequestLog.ts"
import { makeRequestMetrics, RequestMetricsOn } from "./server/RequestMetrics.ts"
import { untracedWithoutItsSpan } from "./server/RequestSampling.ts"
import { makeRouteIndex, ROUTER_CONFIG } from "./server/RouteIndex.ts"
import { ValidationErrorsLive } from "./server/ValidationErrorsLive.ts"
import type { Served } from "./shared/Served.ts"

export { MAX_BODY_BYTES } from "./server/JsonErrors.ts"

/** The handlers of one group of `Groups`, loaded from their module when the server is built. */
type HandlersOf<S> = S extends Served<infer G, infer Return> ? Layer.Layer<
    HttpApiGroup.ToService<typeof Api.identifier, G>,
    HttpApiBuilder.Handlers.Error<Return>,
    Exclude<HttpApiBuilder.Handlers.Context<Return>, Scope.Scope>
  >
  : never

/**
 * The middleware of a group's endpoints as the API serves them (its own and the API's): the
 * services its routes are made with.
 */
const middlewaresOf = (identifier: string): ReadonlyArray<Context.Key<unknown, unknown>> => {
  // Every endpoint carries the set of its middleware keys (HttpApiEndpoint's `middlewares`), which
  // the narrow types of a group's endpoints do not show.
  const group = Api.groups[identifier as keyof typeof Api.groups] as unknown as {
    readonly endpoints: Record<string, { readonly middlewares: ReadonlySet<Context.Key<unknown, unknown>> }>
  }
  return [...new Set(Object.values(group.endpoints).flatMap((endpoint) => [...endpoint.middlewares]))]
}

/**
 * A group's routes are made in a context of its middleware alone; its handlers are built in the
 * whole one. HttpApiBuilder keeps the context its routes were made in and merges it into every
 * request, which already has every service of the server: the middleware are what it adds.
 */
const handlersOf = <S extends (typeof Groups)[number]>(entry: S): HandlersOf<S> => {
  const load: () => Promise<{ readonly default: { readonly build: (handlers: never) => unknown } }> = entry.handlers
  const identifier = entry.group.identifier
  const middlewares = middlewaresOf(identifier)
  // `served` pairs the group with handlers typed for it (`groupHandlers`); only the union of
  // every entry's types needs the assertions.
  return Layer.unwrap(Effect.map(
    Effect.promise(load),
    ({ default: { build } }) =>
      Layer.effectContext(Effect.gen(function*() {
        const whole = yield* Effect.context<never>()
        const scope = yield* Scope.Scope
        const routes = HttpApiBuilder.group(Api, identifier, ((handlers: never) => {
          const built = build(handlers)
          return Effect.isEffect(built) ? Effect.provideContext(built, whole) : built
        }) as never)
        return yield* Effect.updateContext(Layer.buildWithScope(routes, scope), () => Context.pick(...middlewares)(whole))
      }))
  )) as unknown as HandlersOf<S>
}

/** Every group's handlers with the middleware they consume: one per group of `Groups`. */
export const HandlersLive = Layer.mergeAll(...(Groups.map(handlersOf) as [HandlersOf<(typeof Groups)[number]>])).pipe(
  Layer.provide([AuthenticationLive, idempotentLive(Api), ValidationErrorsLive])
)

/**
 * What wraps every request, outermost first: whether it is traced, its id and access-log line,
 * the compressed documentation, and JSON for every error.
 */
const aroundEveryRequest = <Id extends string, Groups extends HttpApiGroup.Constraint>(api: HttpApi.HttpApi<Id, Groups>) =>
  HttpRouter.middleware(
    Effect.gen(function*() {
      // One index of the routes for the 405s, the 404s and the metrics' route labels.
      const routes = makeRouteIndex(api, [DOCS_PATH, OPENAPI_PATH, ...HEALTH_PATHS])
      const errors = jsonErrors(routes, yield* makeLimiterBeforeRouting, yield* DatabaseFailures)
      const docs = compressingDocs([DOCS_PATH, OPENAPI_PATH])
      // Failures are all answered inside; the error type says "passes the rest on" (none are left).
      type Handled = Effect.Effect<HttpServerResponse.HttpServerResponse, Types.unhandled, HttpServerRequest.HttpServerRequest>
      // Measured with the access log's clock, only while metrics or traces are exported (server/RequestMetrics.ts).
      const measured = (yield* RequestMetricsOn) ? makeRequestMetrics(routes) : undefined
      // With a tracer, a request is traced whole or not at all (server/RequestSampling.ts).
      const sampled = (yield* References.TracerEnabled) ? untracedWithoutItsSpan : identity
      return (app: Handled): Handled => sampled(withRequestLog((request) => docs(request, errors(request, app)), measured))
    }),
    { global: true }
  )

const DOCS_PATH = "/docs"
const OPENAPI_PATH = "/api/v1/openapi.json"

/**
 * The routes of `api` with its handlers, OpenAPI at /api/v1/openapi.json, docs at /docs, JSON
 * errors; refused at start when the contract is incomplete.
 */
export const serveApi = <Id extends string, Groups extends HttpApiGroup.Constraint, E, R>(
  api: HttpApi.HttpApi<Id, Groups>,
  handlers: Layer.Layer<HttpApiGroup.ToService<Id, Groups>, E, R>
) =>
  Layer.mergeAll(
    HttpApiBuilder.layer(api, { openapiPath: OPENAPI_PATH }).pipe(Layer.provide(handlers)),
    lazyDocs(api, DOCS_PATH),
    aroundEveryRequest(api)
  ).pipe(Layer.provide(Layer.effectDiscard(checkContract(api))))

/** The product's routes, the health checks and the pruning of expired Idempotency-Keys. Needs the core services. */
export const ApiRoutes = Layer.mergeAll(serveApi(Api, HandlersLive), HealthRoutes, IdempotencyPruning)

/**
 * Spans are made only when a tracer is installed. The default one keeps them nowhere, and making
 * them (one per request, per traced call, per SQL statement) costs a write request a measurable
 * share of its CPU (bench/README.md, "Write endpoints"); an embedder that provides a tracer gets
 * them all. With a tracer they are left on as by default, not set on: the handler groups keep
 * what is set here and put it back in every request, over a request that its sampler left out
 * and that turned them off for itself (server/RequestSampling.ts).
 */
const spansOnlyForATracer = Layer.unwrap(Effect.map(Effect.service(Tracer.Tracer), (tracer) =>
  tracer === Tracer.nativeTracer ? Layer.succeed(References.TracerEnabled)(false) : Layer.empty
))

/**
 * The served application (no listener): provide an HttpServer (server/NodeServer.ts) to run it.
 * Paths match exactly as written: case, trailing and doubled slashes count. Spans are made only
 * when a tracer is installed (see `spansOnlyForATracer`). What holds for every request (the body
 * limit, whether spans are made) is provided to the server once: each request's fiber inherits it.
 */
export const HttpLive = HttpRouter.serve(ApiRoutes, {
  disableLogger: true,
  disableListenLog: true,
  routerConfig: ROUTER_CONFIG
}).pipe(Layer.provide([spansOnlyForATracer, MaxBodySizeLive]))
