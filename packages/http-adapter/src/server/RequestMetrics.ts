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
import * as HttpApi from "effect/http-api/HttpApi"
import type * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import { redactSecrets } from "@chamber/core"

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

/** Paths served beside the contract's, all with GET (health checks, the documentation). */
const OTHER_ROUTES = ["/healthz", "/readyz", "/docs", "/api/v1/openapi.json"]

/** The methods labelled as themselves (OpenTelemetry's `http.request.method`); any other is `_OTHER`. */
export const STANDARD_METHODS: ReadonlySet<string> = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "CONNECT", "TRACE"])

/** The route label of a request no route serves: a path none matches, or a method its route does not serve (404, 405). */
export const UNMATCHED_ROUTE = ""

/** The characters of a canonical path (server/JsonErrors.ts answers any other path 404). */
const NOT_CANONICAL = /[^A-Za-z0-9/._~-]/

/** How many method-and-path shapes keep their route (a path of unknown shape each, so bounded). */
const KNOWN_SHAPES = 4096

/**
 * The route template serving a method and a request path: among the templates whose literal
 * segments match the path segment by segment (a `:name` segment matching any), the one with
 * the most literal segments, as the router chooses, when it serves the method (HEAD wherever
 * GET, as the router does); otherwise `UNMATCHED_ROUTE`.
 */
const templatesOf = <Id extends string, Groups extends HttpApiGroup.Constraint>(api: HttpApi.HttpApi<Id, Groups>) => {
  const methods = new Map<string, Set<string>>(OTHER_ROUTES.map((path) => [path, new Set(["GET"])]))
  HttpApi.reflect(api, {
    onGroup() {},
    onEndpoint({ endpoint }) {
      const served = methods.get(endpoint.path) ?? new Set<string>()
      methods.set(endpoint.path, served.add(endpoint.method))
    }
  })
  const templates = [...methods].map(([path, served]) => {
    if (served.has("GET")) served.add("HEAD")
    const segments = path.split("/")
    return { path, served, segments, literals: segments.filter((s) => !s.startsWith(":")).length }
  })
  return (method: string, path: string): string => {
    if (NOT_CANONICAL.test(path)) return UNMATCHED_ROUTE
    const segments = path.split("/")
    let best: (typeof templates)[number] | undefined
    for (const t of templates) {
      if (t.segments.length !== segments.length || (best !== undefined && t.literals <= best.literals)) continue
      if (t.segments.every((s, i) => s.startsWith(":") ? segments[i] !== "" : s === segments[i])) best = t
    }
    return best !== undefined && best.served.has(method) ? best.path : UNMATCHED_ROUTE
  }
}

/** The path of a request URL, with each all-digit segment (a row id) as `0`: paths of one shape have one route. */
const shapeOf = (url: string) => {
  const end = url.indexOf("?")
  return (end === -1 ? url : url.slice(0, end)).replace(/\/\d+(?=\/|$)/g, "/0")
}

/** What the access log's wrapper (server/RequestLog.ts) tells of each answered request. */
export type OnAnswered = (request: HttpServerRequest.HttpServerRequest, status: number, seconds: number, requestId: string, context: Context.Context<never>) => void

/**
 * Records each answered request (called by the access log's wrapper, server/RequestLog.ts, which
 * times every request anyway): its duration under its route template, and the request id on its
 * span when it is traced.
 */
export const makeRequestMetrics = <Id extends string, Groups extends HttpApiGroup.Constraint>(api: HttpApi.HttpApi<Id, Groups>): OnAnswered => {
  const routeOf = templatesOf(api)
  const routes = new Map<string, string>()
  const series = new Map<string, Metric.Histogram<number>>()
  return (request, status, seconds, requestId, context) => {
    const method = STANDARD_METHODS.has(request.method) ? request.method : "_OTHER"
    const shape = `${method} ${shapeOf(request.url)}`
    let route = routes.get(shape)
    if (route === undefined) {
      if (routes.size >= KNOWN_SHAPES) routes.clear()
      routes.set(shape, route = routeOf(method, shape.slice(method.length + 1)))
    }
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
