/**
 * What the HTTP side counts for operators (docs/operations.md "Metrics", ruling 33): every
 * answer's duration by method, route template and status, and every 429 by the window that was
 * spent. A route is the contract's path template (`/api/v1/members/:id`), never the path sent: no
 * label carries a chamber, a key or a row id. A request no route serves (no route's path, or
 * not its method) has the empty route, and a method outside the standard set is `_OTHER`, so
 * the series are bounded by the routes' methods and the statuses whatever is sent.
 */
import * as Context from "effect/Context"
import * as Metric from "effect/Metric"
import * as Tracer from "effect/Tracer"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import { redactSecrets } from "@chamber/core"
import type { RouteIndex } from "./RouteIndex.ts"

/** Whether requests are measured: on only while metrics or traces are exported (`chamber serve`), so a server without them pays nothing. */
export const RequestMetricsOn = Context.Reference<boolean>("chamber/http/RequestMetricsOn", { defaultValue: () => false })

const DURATION_BOUNDARIES = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

const durationOf = (attributes: Record<string, string>) =>
  Metric.histogram("http_server_request_duration_seconds", {
    description: "Time from a request's arrival to its answer, by method, route template and status.",
    boundaries: DURATION_BOUNDARIES,
    attributes
  })

const rateLimitedOf = (window: string) =>
  Metric.counter("chamber_rate_limited_total", {
    description: "Requests answered 429 because a key's window was spent, by window (minute or day).",
    incremental: true,
    attributes: { window }
  })
const rateLimited = { minute: rateLimitedOf("minute"), day: rateLimitedOf("day") }
// Both windows are reported from the start, at 0, so a rate over them has a beginning.
rateLimited.minute.updateUnsafe(0, Context.empty())
rateLimited.day.updateUnsafe(0, Context.empty())

/** A 429 counted against the window that was spent. */
export const countRateLimited = (window: "minute" | "day"): void => rateLimited[window].updateUnsafe(1, Context.empty())

/** The methods labelled as themselves (OpenTelemetry's `http.request.method`); any other is `_OTHER`. */
export const STANDARD_METHODS: ReadonlySet<string> = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "CONNECT", "TRACE"])

/** The route label of a request no route serves: a path none matches, or a method its route does not serve (404, 405). */
export const UNMATCHED_ROUTE = ""

/** What the access log's wrapper (server/RequestLog.ts) tells of each answered request. */
export type OnAnswered = (request: HttpServerRequest.HttpServerRequest, status: number, seconds: number, requestId: string, context: Context.Context<never>) => void

/**
 * Records each answered request (called by the access log's wrapper, server/RequestLog.ts, which
 * times every request anyway): its duration under its route template, and the request id on its
 * span when it is traced.
 */
export const makeRequestMetrics = (routes: RouteIndex): OnAnswered => {
  const series = new Map<string, Metric.Histogram<number>>()
  return (request, status, seconds, requestId, context) => {
    const method = STANDARD_METHODS.has(request.method) ? request.method : "_OTHER"
    const found = routes(request.url)
    const route = found !== undefined && found.methods.has(method) ? found.template : UNMATCHED_ROUTE
    const key = `${method} ${status} ${route}`
    let histogram = series.get(key)
    if (histogram === undefined) {
      // Every label is from a fixed set (a method, a template, a status the server answers),
      // and still passes the rule every label and line does (core's Redaction.ts).
      series.set(key, histogram = durationOf({
        http_request_method: redactSecrets(method),
        http_route: redactSecrets(route),
        http_response_status_code: String(status)
      }))
    }
    histogram.updateUnsafe(seconds, Context.empty())
    const span = Context.getOrUndefined(context, Tracer.ParentSpan)
    if (span !== undefined && span._tag === "Span" && span.sampled) span.attribute("request_id", requestId)
  }
}
