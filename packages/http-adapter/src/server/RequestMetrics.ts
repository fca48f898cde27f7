/**
 * What the HTTP side counts for operators (docs/operations.md "Metrics", ruling 33): every
 * answer's duration by method, route template and status, and every 429 by the window that was
 * spent. A route is the contract's path template (`/api/v1/members/:id`), never the path sent: no
 * label carries a chamber, a key or a row id. A path no route serves has the empty route.
 */
import * as Context from "effect/Context"
import * as Metric from "effect/Metric"
import * as Tracer from "effect/Tracer"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpApi from "effect/http-api/HttpApi"
import type * as HttpApiGroup from "effect/http-api/HttpApiGroup"

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

/** Paths served beside the contract's (health checks, the documentation). */
const OTHER_ROUTES = ["/healthz", "/readyz", "/docs"]

/** How many method-and-path shapes keep their route (a path of unknown shape each, so bounded). */
const KNOWN_SHAPES = 4096

/**
 * The route template of a request path: among the templates whose literal segments match it
 * segment by segment (a `:name` segment matching any), the one with the most literal segments,
 * as the router chooses.
 */
const templatesOf = <Id extends string, Groups extends HttpApiGroup.Constraint>(api: HttpApi.HttpApi<Id, Groups>) => {
  const paths = new Set<string>(OTHER_ROUTES)
  HttpApi.reflect(api, { onGroup() {}, onEndpoint({ endpoint }) { paths.add(endpoint.path) } })
  const templates = [...paths].map((path) => {
    const segments = path.split("/")
    return { path, segments, literals: segments.filter((s) => !s.startsWith(":")).length }
  })
  return (path: string): string => {
    const segments = path.split("/")
    let best: (typeof templates)[number] | undefined
    for (const t of templates) {
      if (t.segments.length !== segments.length || (best !== undefined && t.literals <= best.literals)) continue
      if (t.segments.every((s, i) => s.startsWith(":") ? segments[i] !== "" : s === segments[i])) best = t
    }
    return best?.path ?? ""
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
    const shape = shapeOf(request.url)
    let route = routes.get(shape)
    if (route === undefined) {
      if (routes.size >= KNOWN_SHAPES) routes.clear()
      routes.set(shape, route = routeOf(shape))
    }
    const method = request.method
    const key = `${method} ${status} ${route}`
    let histogram = series.get(key)
    if (histogram === undefined) {
      // A method Node accepts but no route has is counted as such: the set of methods Node parses is fixed.
      series.set(key, histogram = durationOf({ http_request_method: method, http_route: route, http_response_status_code: String(status) }))
    }
    histogram.updateUnsafe(seconds, Context.empty())
    const span = Context.getOrUndefined(context, Tracer.ParentSpan)
    if (span !== undefined && span._tag === "Span" && span.sampled) span.attribute("request_id", requestId)
  }
}
