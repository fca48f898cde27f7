/**
 * Our server for the bench (bench/README.md "Servers"): HttpLive over StorageLive on DATABASE_URL,
 * pool BENCH_POOL_SIZE, prints `BENCH_LISTENING <port>`. BENCH_ACCESS_LOG=<file>: the access log
 * by `chamber serve`'s logger (else warnings only); BENCH_RATE_LIMITS=off: no rate limiter.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as References from "effect/References"
import { openSync, writeSync } from "node:fs"
import * as HttpServer from "effect/http/HttpServer"
import { NoRateLimits, SavedRateLimitStore } from "../packages/core/src/index.ts"
import { pipelineFromEnv, StorageLive } from "../packages/pg-adapter/src/index.ts"
import { HttpLive, NodeServerLive, RateLimitPerMinute } from "../packages/http-adapter/src/index.ts"
import { HookPingsLive } from "../packages/webhook-relay/src/index.ts"
import { linesLogger } from "../packages/cli/src/LogLines.ts"
import { observability, observabilityFromEnv } from "../packages/cli/src/observability/Observability.ts"
import { runUntilStopped } from "../packages/cli/src/Run.ts"
import { LISTENING, POOL_SIZE } from "./shared.ts"

const url = process.env.DATABASE_URL
if (url === undefined || url === "") throw new Error("our-server: DATABASE_URL is required")

const accessLog = process.env.BENCH_ACCESS_LOG || undefined
const Logging = accessLog === undefined
  ? Layer.succeed(References.MinimumLogLevel)("Warn")
  : Logger.layer([linesLogger("json", ((fd) => (line: string) => void writeSync(fd, line + "\n"))(openSync(accessLog, "a")))])

const { telemetry, readers } = observability(observabilityFromEnv(), () => Effect.void)

const App = Layer.mergeAll(HttpLive.pipe(Layer.provide(telemetry)), readers).pipe(
  Layer.provideMerge(NodeServerLive({ port: 0, host: "127.0.0.1" })),
  Layer.provide([process.env.BENCH_RATE_LIMITS === "off" ? NoRateLimits : SavedRateLimitStore, Layer.succeed(RateLimitPerMinute)(1_000_000_000)]),
  Layer.provide(HookPingsLive({ timeoutMs: 10_000, allowPrivate: false })),
  Layer.provide(StorageLive({ _tag: "Postgres", url, maxConnections: POOL_SIZE, pipeline: pipelineFromEnv() })),
  Layer.provide(Logging)
)

Effect.gen(function*() {
  const server = yield* HttpServer.HttpServer
  console.log(`${LISTENING} ${(server.address as { readonly port: number }).port}`)
  return yield* Effect.never
}).pipe(Effect.provide(App), (program) => runUntilStopped(program, false))
