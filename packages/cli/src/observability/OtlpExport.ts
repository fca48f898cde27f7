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
 * failure is logged as a warning, and the collector answering again at info. No span leaves with
 * a key or a secret in it (SpanRedaction.ts).
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Tracer from "effect/Tracer"
import * as Option from "effect/Option"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpBody from "effect/http/HttpBody"
import * as HttpClientError from "effect/http/HttpClientError"
import * as HttpMiddleware from "effect/http/HttpMiddleware"
import * as HttpTraceContext from "effect/http/HttpTraceContext"
import * as UrlParams from "effect/http/UrlParams"
import * as OtlpExporter from "effect/observability/OtlpExporter"
import * as OtlpMetrics from "effect/observability/OtlpMetrics"
import * as OtlpSerialization from "effect/observability/OtlpSerialization"
import * as OtlpTracer from "effect/observability/OtlpTracer"
import type { OtlpSettings } from "./OtlpSettings.ts"
import { encodeTraces } from "./OtlpTraceEncoding.ts"
import { redactTraces } from "./SpanRedaction.ts"

/** How long one send to the collector may take before it counts as failed. */
const SEND_TIMEOUT_MS = 10_000

/**
 * The HTTP client of the exporters: Node's http over kept-alive connections (fetch's web streams
 * cost an export about as much CPU as encoding its spans); each send within its deadline; the
 * collector's first failure warned of, its recovery told.
 */
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
  })).pipe(Layer.provide(NodeHttpClient.layerNodeHttpOptions({ keepAlive: true })))

/**
 * OTLP/HTTP protobuf: spans written by OtlpTraceEncoding.ts (one pass, one buffer: the batches of
 * every traced request), metrics by Effect's encoder (one export an interval).
 */
const protobuf = Layer.effect(
  OtlpSerialization.OtlpSerialization,
  Effect.map(Effect.service(OtlpSerialization.OtlpSerialization), (effects) => ({
    ...effects,
    traces: (data) => HttpBody.uint8Array(encodeTraces(data), "application/x-protobuf")
  }))
).pipe(Layer.provide(OtlpSerialization.layerProtobuf))

/**
 * Whichever the protocol, spans are encoded with the access log's redaction applied
 * (SpanRedaction.ts): what the server and the services recorded is redacted once, as it leaves.
 */
const redacting = (serialization: Layer.Layer<OtlpSerialization.OtlpSerialization>) =>
  Layer.effect(
    OtlpSerialization.OtlpSerialization,
    Effect.map(Effect.service(OtlpSerialization.OtlpSerialization), (effects) => ({
      ...effects,
      traces: (data) => effects.traces(redactTraces(data))
    }))
  ).pipe(Layer.provide(serialization))

/**
 * A parent-based ratio sampler. Root spans other than a request's are kept at `ratio`; a span's
 * children follow its choice.
 */
const sampling = (tracer: Tracer.Tracer, ratio: number): Tracer.Tracer =>
  ratio >= 1 ? tracer : Tracer.make({
    span: (options) =>
      tracer.span(options.parent._tag === "None" && options.sampled && options.kind !== "server" ? { ...options, sampled: Math.random() < ratio } : options),
    ...(tracer.context === undefined ? {} : { context: tracer.context })
  })

/**
 * A request is chosen before its span is made: one that carries a W3C or B3 parent follows that
 * parent's choice, any other is kept at `ratio`. One left out makes no span at all (http-adapter
 * server/RequestSampling.ts), so it costs about what it costs untraced.
 */
const requestSampling = (ratio: number) => {
  if (ratio >= 1) return Layer.empty
  // Effect's server asks more than once a request: the same answer each time.
  const leftOut = new WeakMap<object, boolean>()
  return Layer.succeed(HttpMiddleware.TracerDisabledWhen)((request) => {
    let out = leftOut.get(request)
    if (out === undefined) {
      const parent = HttpTraceContext.fromHeaders(request.headers)
      leftOut.set(request, out = Option.isSome(parent) ? !parent.value.sampled : Math.random() >= ratio)
    }
    return out
  })
}

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
  // URLs are recorded as sent, then redacted as they leave by the access log's rule (which
  // covers Effect's own list of names), so a span's `url.*` shows `[redacted]` where the log does.
  const urlsAsSent = Layer.succeed(UrlParams.CurrentRedactedNames)([])
  return Layer.mergeAll(tracer, metrics, requestSampling(settings.ratio), urlsAsSent).pipe(
    Layer.provide([
      collectorClient(settings.endpoint),
      redacting(settings.protocol === "http/json" ? OtlpSerialization.layerJson : protobuf)
    ])
  )
}
