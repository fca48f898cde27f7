/**
 * The HTTP server: the contract's routes with their handlers, checked before they serve
 * (server/ContractCheck.ts), the OpenAPI document and docs page, and JSON for every error.
 * Adding a resource adds its handlers to `HandlersLive` (docs/architecture.md "Adding a resource").
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as References from "effect/References"
import type * as Scope from "effect/Scope"
import * as Tracer from "effect/Tracer"
import type * as Types from "effect/Types"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServer from "effect/http/HttpServer"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import type * as HttpApi from "effect/http-api/HttpApi"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import type * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import { DatabaseFailures } from "@chamber/core"
import { Api } from "./Api.ts"
import { BookingsHandlers } from "./bookings/BookingsHandlers.ts"
import { ContactsHandlers } from "./contacts/ContactsHandlers.ts"
import { DealsHandlers } from "./deals/DealsHandlers.ts"
import { EventsHandlers } from "./events/EventsHandlers.ts"
import { HooksHandlers } from "./hooks/HooksHandlers.ts"
import { InvoicesHandlers } from "./invoices/InvoicesHandlers.ts"
import { MeHandlers } from "./me/MeHandlers.ts"
import { MembersHandlers } from "./members/MembersHandlers.ts"
import { PaymentsHandlers } from "./payments/PaymentsHandlers.ts"
import { PlacementsHandlers } from "./placements/PlacementsHandlers.ts"
import { AuthenticationLive } from "./server/AuthenticationLive.ts"
import { checkContract } from "./server/ContractCheck.ts"
import { compressingDocs } from "./server/DocsCompression.ts"
import { HealthRoutes } from "./server/Health.ts"
import { jsonErrors, maxBodySize } from "./server/JsonErrors.ts"
import { lazyDocs } from "./server/LazyDocs.ts"
import { makeOutsideCounting } from "./server/OutsideEndpoints.ts"
import { withRequestLog } from "./server/RequestLog.ts"
import { ValidationErrorsLive } from "./server/ValidationErrorsLive.ts"
import { SponsorshipsHandlers } from "./sponsorships/SponsorshipsHandlers.ts"

export { MAX_BODY_BYTES } from "./server/JsonErrors.ts"

/** Every group's handlers with the middleware they consume. */
export const HandlersLive = Layer.mergeAll(
  MeHandlers,
  MembersHandlers,
  ContactsHandlers,
  EventsHandlers,
  InvoicesHandlers,
  PaymentsHandlers,
  DealsHandlers,
  SponsorshipsHandlers,
  PlacementsHandlers,
  BookingsHandlers,
  HooksHandlers
).pipe(
  Layer.provide([AuthenticationLive, ValidationErrorsLive])
)

/**
 * What every request passes first, outermost first: its id and access-log line, the compressed
 * documentation, and JSON for every error.
 */
const frontDoor = <Id extends string, Groups extends HttpApiGroup.Constraint>(api: HttpApi.HttpApi<Id, Groups>) =>
  HttpRouter.middleware(
    Effect.gen(function*() {
      const errors = jsonErrors(api, yield* makeOutsideCounting, yield* DatabaseFailures)
      const docs = compressingDocs([DOCS_PATH, OPENAPI_PATH])
      // Failures are all answered inside; the error type says "passes the rest on" (none are left).
      type Handled = Effect.Effect<HttpServerResponse.HttpServerResponse, Types.unhandled, HttpServerRequest.HttpServerRequest>
      return (app): Handled => withRequestLog([maxBodySize], (request) => docs(request, errors(request, app)))
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
    frontDoor(api)
  ).pipe(Layer.provide(Layer.effectDiscard(checkContract(api))))

/** The product's routes and the health checks. Needs the core services. */
export const ApiRoutes = Layer.mergeAll(serveApi(Api, HandlersLive), HealthRoutes)

/**
 * Spans are made only when a tracer is installed. The default one keeps them nowhere, and making
 * them (one per request, per traced call, per SQL statement) costs a write request a measurable
 * share of its CPU (bench/README.md, "Write endpoints"); an embedder that provides a tracer gets
 * them all.
 */
const spansOnlyForATracer = Effect.map(Effect.service(Tracer.Tracer), (tracer) => tracer !== Tracer.nativeTracer)

/** The router's matching: paths match exactly as written; case, trailing and doubled slashes count. */
const routerConfig = { caseSensitive: true, ignoreTrailingSlash: false, ignoreDuplicateSlashes: false }

/**
 * What the application is built from, and its requests need no more: the core services, the SQL
 * client and the platform's services. The routes, handlers and middleware take what they need of
 * them at start, so a request's fiber starts without them: every service a request adds to its
 * context copies what the fiber holds, a few entries instead of sixty (docs/architecture.md
 * "What a request's fiber holds"). References (log level, loggers, tracer, an embedder's own) stay.
 */
const BUILT_FROM = new RegExp(
  "^(chamber/.*|@effect/sql-.*|effect/sql/SqlClient|effect/Layer/CurrentMemoMap|effect/http/HttpPlatform|effect/http/Etag/Generator|" +
    "effect/FileSystem|effect/Path|~effect/Stdio|effect/Terminal|effect/process/ChildProcessSpawner)$"
)

/**
 * How many services a request may add to its fiber's context as overlays before the next add
 * copies the whole map (Effect's default: 8). A request adds about ten: the server's, the
 * router's, the front door's and its key.
 */
const REQUEST_OVERLAYS = 16

/** What a request's fiber is typed to have: a route that needs anything else while it answers does not compile. */
type RequestTime = Scope.Scope | HttpServer.HttpServer

const forRequests = (context: Context.Context<RequestTime>): Context.Context<RequestTime> => {
  const kept = new Map<string, unknown>()
  for (const [key, service] of context.mapUnsafe) if (!BUILT_FROM.test(key)) kept.set(key, service)
  return Context.makeUnsafe(kept, { maxDepth: REQUEST_OVERLAYS })
}

/**
 * The served application (no listener): provide an HttpServer (server/NodeServer.ts) to run it.
 * Paths match exactly as written: case, trailing and doubled slashes count. Spans are made only
 * when a tracer is installed (see `spansOnlyForATracer`).
 */
export const HttpLive = Layer.effectDiscard(Effect.gen(function*() {
  const app = yield* HttpRouter.toHttpEffect(ApiRoutes).pipe(Effect.provideService(HttpRouter.RouterConfig, routerConfig))
  const context = yield* Effect.context<RequestTime>()
  yield* HttpServer.serveEffect(app).pipe(Effect.setContext(forRequests(context)))
})).pipe(Layer.provide(Layer.effect(References.TracerEnabled, spansOnlyForATracer)))
