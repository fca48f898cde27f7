/**
 * CHAMBER_METRICS_PORT (docs/operations.md "Metrics"): `GET /metrics` in Prometheus's text format
 * (Effect's PrometheusMetrics) on a server of its own, Effect's Node HTTP server on
 * CHAMBER_METRICS_HOST (127.0.0.1 unless set); any other path is a 404, any other method a 405.
 * The API's port never serves it. A render first reads the process's metrics and the webhook
 * backlog; scrapes within `REUSE_MS` of a render share its text, so scrapers in a loop cost the
 * process (the API's event loop, the database) one render a second at most.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as HttpServer from "effect/http/HttpServer"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as PrometheusMetrics from "effect/observability/PrometheusMetrics"
import { createServer } from "node:http"

export class MetricsListenError extends Error {}

/** How long a render answers the scrapes that follow it (Prometheus scrapes every 15 s by default). */
export const REUSE_MS = 1000

const listenError = (cause: unknown, host: string, port: number) => {
  const error = cause as NodeJS.ErrnoException
  return new MetricsListenError(
    error.code === "EADDRINUSE"
      ? `CHAMBER_METRICS_PORT ${port} is already in use on ${host}. Choose another.`
      : `Cannot serve metrics on ${host}:${port} (CHAMBER_METRICS_HOST, CHAMBER_METRICS_PORT): ${error.message}.`
  )
}

const CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

/**
 * The metrics listener for as long as the layer lives; `read` runs before each render.
 * `onListening` is told the address (port 0 chooses one).
 */
export const metricsListener = (options: {
  readonly host: string
  readonly port: number
  readonly read: Effect.Effect<void>
  readonly onListening: (url: string) => Effect.Effect<void>
}) =>
  Layer.effectDiscard(Effect.gen(function*() {
    const render = yield* Effect.cachedWithTTL(Effect.andThen(options.read, PrometheusMetrics.format()), Duration.millis(REUSE_MS))
    const app = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      if (request.url.split("?")[0] !== "/metrics") return HttpServerResponse.text("Not found.\n", { status: 404 })
      if (request.method !== "GET" && request.method !== "HEAD") {
        return HttpServerResponse.text("Method not allowed.\n", { status: 405, headers: { allow: "GET, HEAD" } })
      }
      return HttpServerResponse.text(yield* render, { contentType: CONTENT_TYPE })
    }).pipe(Effect.withTracerEnabled(false))
    yield* HttpServer.serveEffect(app)
    const url = `${HttpServer.formatAddress((yield* HttpServer.HttpServer).address)}/metrics`
    yield* options.onListening(url)
  })).pipe(
    Layer.provide(NodeHttpServer.layerServer(createServer, { port: options.port, host: options.host })),
    Layer.catchTag("ServeError", (error) => Layer.effectDiscard(Effect.fail(listenError(error.cause, options.host, options.port))))
  )
