/**
 * CHAMBER_METRICS_PORT (docs/operations.md "Metrics"): `GET /metrics` in Prometheus's text format
 * on a listener of its own, on CHAMBER_METRICS_HOST (127.0.0.1 unless set); any other path is a 404, any other
 * method a 405. The API's port never serves it. A render first reads the process's metrics and
 * the webhook backlog; scrapes within `REUSE_MS` of a render share its text, so scrapers in a
 * loop cost the process (the API's event loop, the database) one render a second at most.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as PrometheusMetrics from "effect/observability/PrometheusMetrics"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"

export class MetricsListenError extends Error {}

/** How long a render answers the scrapes that follow it (Prometheus scrapes every 15 s by default). */
export const REUSE_MS = 1000

const listenError = (error: NodeJS.ErrnoException, host: string, port: number) =>
  new MetricsListenError(
    error.code === "EADDRINUSE"
      ? `CHAMBER_METRICS_PORT ${port} is already in use on ${host}. Choose another.`
      : `Cannot serve metrics on ${host}:${port} (CHAMBER_METRICS_HOST, CHAMBER_METRICS_PORT): ${error.message}.`
  )

/**
 * The metrics listener for as long as the layer lives; `read` runs before each scrape.
 * `onListening` is told the address (port 0 chooses one).
 */
export const metricsListener = (options: {
  readonly host: string
  readonly port: number
  readonly read: Effect.Effect<void>
  readonly onListening: (url: string) => Effect.Effect<void>
}) =>
  Layer.effectDiscard(Effect.gen(function*() {
    const context = yield* Effect.context<never>()
    // Encoded once a render: the scrapes that share it send the same bytes.
    const render = Effect.andThen(options.read, Effect.map(PrometheusMetrics.format(), (text) => Buffer.from(text)))
    let last: { readonly at: number; readonly body: Promise<Buffer> } | undefined
    const scrape = () => {
      const now = performance.now()
      if (last === undefined || now - last.at >= REUSE_MS) {
        const body = Effect.runPromiseWith(context)(render)
        last = { at: now, body }
        // A failed render is not reused: the next scrape tries again.
        body.catch(() => { if (last?.body === body) last = undefined })
      }
      return last.body
    }
    const server = yield* Effect.acquireRelease(
      Effect.callback<Server, MetricsListenError>((resume) => {
        const server = createServer((req, res) => {
          const path = (req.url ?? "/").split("?")[0]
          if (path !== "/metrics") return res.writeHead(404, { "content-type": "text/plain" }).end("Not found.\n")
          if (req.method !== "GET" && req.method !== "HEAD") {
            return res.writeHead(405, { allow: "GET, HEAD", "content-type": "text/plain" }).end("Method not allowed.\n")
          }
          scrape().then(
            (body) => res.writeHead(200, { "content-type": "text/plain; version=0.0.4; charset=utf-8" }).end(body),
            () => res.writeHead(500, { "content-type": "text/plain" }).end("The metrics could not be read.\n")
          )
        })
        server.once("error", (error) => resume(Effect.fail(listenError(error, options.host, options.port))))
        server.listen(options.port, options.host, () => resume(Effect.succeed(server)))
      }),
      (server) => Effect.callback<void>((resume) => {
        server.close(() => resume(Effect.void))
        server.closeAllConnections()
      })
    )
    const { address, port } = server.address() as AddressInfo
    yield* options.onListening(`http://${address.includes(":") ? `[${address}]` : address}:${port}/metrics`)
  }))
