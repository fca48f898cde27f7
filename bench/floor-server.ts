/**
 * The floor for the per-request bench (per-request.ts): Effect's HTTP server and the product's
 * own key lookup (`Keys.authenticate` over `@effect/sql-pg`), one route per measured endpoint
 * answering the same JSON, and nothing else: no HttpApi, no front door, no rate limiter. What
 * ours spends above it is the API layer's; what it spends above the baseline is the runtime's.
 * Prints `BENCH_LISTENING <port>`.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServer from "effect/http/HttpServer"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { createServer } from "node:http"
import { canWrite, Keys, Members } from "../packages/core/src/index.ts"
import { pipelineFromEnv, StorageLive } from "../packages/pg-adapter/src/index.ts"
import { importFromPackage, LISTENING, POOL_SIZE } from "./shared.ts"

const NodeHttpServer = await importFromPackage("http-adapter", "@effect/platform-node/NodeHttpServer")
const NodeRuntime = await importFromPackage("http-adapter", "@effect/platform-node/NodeRuntime")

const json = (body: unknown, status = 200) => HttpServerResponse.text(JSON.stringify(body), { status, contentType: "application/json" })

/** The key of the request, or a 401. */
const authenticated = <A>(f: (key: NonNullable<Effect.Success<ReturnType<Keys["Service"]["authenticate"]>>>) => Effect.Effect<HttpServerResponse.HttpServerResponse, never, A>) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const key = yield* (yield* Keys).authenticate((request.headers.authorization ?? "").replace(/^Bearer +/i, ""))
    return key === undefined ? json({ message: "Unauthenticated." }, 401) : yield* f(key)
  })

const Routes = Layer.mergeAll(
  HttpRouter.add("GET", "/api/v1/me", authenticated((key) =>
    Effect.succeed(json({
      chamber: key.chamber,
      key: { name: key.name, prefix: key.prefix, scopes: key.scopes, can_write: canWrite(key.scopes) },
      label: `${key.chamber.name} (${key.name})`
    })))),
  HttpRouter.add("GET", "/api/v1/members/:id", authenticated((key) =>
    Effect.gen(function*() {
      const { params } = yield* HttpRouter.RouteContext
      const member = yield* (yield* Members).get(key.tenantId, Number(params.id)).pipe(Effect.option)
      return member._tag === "Some" ? json({ data: member.value }) : json({ message: "Not found." }, 404)
    })))
)

const App = HttpRouter.serve(Routes, { disableLogger: true, disableListenLog: true }).pipe(
  Layer.provideMerge(NodeHttpServer.layer(() => createServer(), { port: Number(process.env.PORT ?? 0), host: "127.0.0.1" })),
  Layer.provide(StorageLive({ _tag: "Postgres", url: process.env.DATABASE_URL!, maxConnections: POOL_SIZE, pipeline: pipelineFromEnv() }))
)

Effect.gen(function*() {
  const server = yield* HttpServer.HttpServer
  console.log(`${LISTENING} ${(server.address as { readonly port: number }).port}`)
  return yield* Effect.never
}).pipe(Effect.provide(App), NodeRuntime.runMain)
