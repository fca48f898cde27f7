/**
 * OTEL_EXPORTER_OTLP_ENDPOINT (docs/operations.md "Traces"): spans (one per request, per core
 * service call and per SQL statement, linked) and the metrics, over OTLP/HTTP with Effect's own
 * exporters. Honours OTEL_SERVICE_NAME (default `chamber`), OTEL_RESOURCE_ATTRIBUTES,
 * OTEL_TRACES_SAMPLER_ARG (the ratio of requests traced, default 1), OTEL_EXPORTER_OTLP_PROTOCOL
 * (`http/protobuf`, the default, or `http/json`), OTEL_EXPORTER_OTLP_HEADERS,
 * OTEL_METRIC_EXPORT_INTERVAL and OTEL_BSP_SCHEDULE_DELAY (milliseconds). Unset: nothing runs.
 *
 * A collector that does not answer never holds up a request: spans wait in a batch of at most
 * OTEL_BSP_MAX_EXPORT_BATCH_SIZE, sent in the background with a deadline; after a send fails its
 * batch is dropped and the exporter drops what comes for a minute, then tries again. The first
 * failure is logged as a warning, and the collector answering again at info.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Tracer from "effect/Tracer"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientError from "effect/http/HttpClientError"
import * as OtlpExporter from "effect/observability/OtlpExporter"
import * as OtlpMetrics from "effect/observability/OtlpMetrics"
import * as OtlpSerialization from "effect/observability/OtlpSerialization"
import * as OtlpTracer from "effect/observability/OtlpTracer"

export interface OtlpSettings {
  readonly endpoint: string
  readonly serviceName: string
  readonly protocol: "http/protobuf" | "http/json"
  readonly headers: Record<string, string>
  /** The share of requests (root spans) traced, from 0 to 1; their children follow them. */
  readonly ratio: number
  readonly metricsIntervalMs: number
  readonly tracesIntervalMs: number
  readonly maxBatchSize: number
}

export class OtlpConfigError extends Error {}

const millis = (env: Readonly<Record<string, string | undefined>>, name: string, fallback: number) => {
  const text = env[name]?.trim()
  if (text === undefined || text === "") return fallback
  const n = Number(text)
  if (!Number.isInteger(n) || n <= 0) throw new OtlpConfigError(`${name} must be a whole number of milliseconds above 0, not "${text}".`)
  return n
}

/** `k=v,k2=v2`, each part percent-decoded (the OTel format of OTEL_EXPORTER_OTLP_HEADERS). */
const pairs = (text: string | undefined): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const part of (text ?? "").split(",")) {
    const eq = part.indexOf("=")
    if (eq <= 0) continue
    out[decodeURIComponent(part.slice(0, eq).trim())] = decodeURIComponent(part.slice(eq + 1).trim())
  }
  return out
}

/** The settings, or undefined when OTEL_EXPORTER_OTLP_ENDPOINT is unset or empty; throws an error naming a bad variable. */
export const otlpSettingsFromEnv = (env: Readonly<Record<string, string | undefined>> = process.env): OtlpSettings | undefined => {
  const endpoint = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim()
  if (endpoint === undefined || endpoint === "") return undefined
  let url: URL
  try {
    url = new URL(endpoint)
  } catch {
    throw new OtlpConfigError(`OTEL_EXPORTER_OTLP_ENDPOINT must be an http or https URL, not "${endpoint}".`)
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new OtlpConfigError(`OTEL_EXPORTER_OTLP_ENDPOINT must be an http or https URL, not "${endpoint}".`)
  }
  const protocol = env.OTEL_EXPORTER_OTLP_PROTOCOL?.trim() || "http/protobuf"
  if (protocol !== "http/protobuf" && protocol !== "http/json") {
    throw new OtlpConfigError(`OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf or http/json, not "${protocol}".`)
  }
  const ratioText = env.OTEL_TRACES_SAMPLER_ARG?.trim()
  const ratio = ratioText === undefined || ratioText === "" ? 1 : Number(ratioText)
  if (!(ratio >= 0 && ratio <= 1)) throw new OtlpConfigError(`OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1, not "${ratioText}".`)
  return {
    endpoint: endpoint.replace(/\/+$/, ""),
    serviceName: env.OTEL_SERVICE_NAME?.trim() || pairs(env.OTEL_RESOURCE_ATTRIBUTES)["service.name"] || "chamber",
    protocol,
    headers: pairs(env.OTEL_EXPORTER_OTLP_HEADERS),
    ratio,
    metricsIntervalMs: millis(env, "OTEL_METRIC_EXPORT_INTERVAL", 60_000),
    tracesIntervalMs: millis(env, "OTEL_BSP_SCHEDULE_DELAY", 5_000),
    maxBatchSize: millis(env, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 512)
  }
}

/** How long one send to the collector may take before it counts as failed. */
const SEND_TIMEOUT_MS = 10_000

/** The HTTP client of the exporters: each send within its deadline; the collector's first failure warned of, its recovery told. */
const collectorClient = (endpoint: string) =>
  Layer.effect(HttpClient.HttpClient, Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    let failing = false
    const failed = (why: unknown) =>
      failing ? Effect.void : Effect.suspend(() => {
        failing = true
        return Effect.logWarning(`telemetry: the OTLP collector at ${endpoint} does not answer; spans and metrics are dropped until it does`, why)
      })
    const recovered = Effect.suspend(() => {
      if (!failing) return Effect.void
      failing = false
      return Effect.logInfo(`telemetry: the OTLP collector at ${endpoint} answers again`)
    })
    return client.pipe(
      HttpClient.transform((response, request) =>
        response.pipe(
          Effect.timeoutOrElse({
            duration: SEND_TIMEOUT_MS,
            orElse: () =>
              Effect.fail(
                new HttpClientError.HttpClientError({
                  reason: new HttpClientError.TransportError({ request, description: `no answer within ${SEND_TIMEOUT_MS} ms` })
                })
              )
          }),
          Effect.tap((r) => (r.status >= 400 ? failed(`it answered ${r.status}`) : recovered)),
          Effect.tapCause(failed)
        )
      )
    )
  })).pipe(Layer.provide(FetchHttpClient.layer))

/** Root spans kept at `ratio`; a span's children follow its choice (a parent-based ratio sampler). */
const sampling = (tracer: Tracer.Tracer, ratio: number): Tracer.Tracer =>
  ratio >= 1 ? tracer : Tracer.make({
    span: (options) => tracer.span(options.parent._tag === "None" && options.sampled ? { ...options, sampled: Math.random() < ratio } : options),
    ...(tracer.context === undefined ? {} : { context: tracer.context })
  })

/** The tracer and the metrics exporter, sending to the collector for as long as the layer lives. */
export const otlpExport = (settings: OtlpSettings) => {
  const resource = { serviceName: settings.serviceName }
  const common = { resource, headers: settings.headers, shutdownTimeout: Duration.seconds(3) }
  const tracer = Layer.effect(
    Tracer.Tracer,
    Effect.map(
      OtlpTracer.make({
        ...common,
        url: `${settings.endpoint}/v1/traces`,
        exportInterval: Duration.millis(settings.tracesIntervalMs),
        maxBatchSize: settings.maxBatchSize
      }),
      (t) => sampling(t, settings.ratio)
    )
  ).pipe(Layer.provide(OtlpExporter.layerFlusher))
  const metrics = OtlpMetrics.layer({ ...common, url: `${settings.endpoint}/v1/metrics`, exportInterval: Duration.millis(settings.metricsIntervalMs) })
  return Layer.mergeAll(tracer, metrics).pipe(
    Layer.provide([
      collectorClient(settings.endpoint),
      settings.protocol === "http/json" ? OtlpSerialization.layerJson : OtlpSerialization.layerProtobuf
    ])
  )
}
