/**
 * OTEL_EXPORTER_OTLP_ENDPOINT (docs/operations.md "Traces"): spans (one per request, per core
 * service call and per SQL statement, linked) and the metrics, over OTLP/HTTP through Effect's
 * own exporters (`OtlpTracer` and `OtlpMetrics`, configured from the `OTEL_*` variables they
 * read) and its serialization, protobuf or JSON. What they leave to the application is here:
 * both signals on when the endpoint is set (Effect's layers also wait for
 * OTEL_TRACES_EXPORTER/OTEL_METRICS_EXPORTER to say `otlp`), the service name `chamber` unless
 * one is given, each signal's protocol (spans as JSON unless told otherwise),
 * OTEL_TRACES_SAMPLER_ARG, the redaction of every span, and a collector that does not answer
 * told once.
 *
 * A collector that does not answer never holds up a request: spans wait in a batch, sent in the
 * background with a deadline; after a send fails its batch is dropped and the exporter drops
 * what comes for a minute, then tries again. The first failure is logged as a warning, and the
 * collector answering again at info. No span leaves with a key or a secret in it (SpanRedaction.ts).
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientError from "effect/http/HttpClientError"
import * as HttpMiddleware from "effect/http/HttpMiddleware"
import * as HttpTraceContext from "effect/http/HttpTraceContext"
import * as UrlParams from "effect/http/UrlParams"
import * as OtlpMetrics from "effect/observability/OtlpMetrics"
import * as OtlpSerialization from "effect/observability/OtlpSerialization"
import * as OtlpTracer from "effect/observability/OtlpTracer"
import type { OtlpProtocol, OtlpSettings } from "./Observability.ts"
import { redactTraces } from "./SpanRedaction.ts"

/** How long one send to the collector may take before it counts as failed. */
const SEND_TIMEOUT_MS = 10_000

/**
 * The HTTP client of the exporters: Node's http over kept-alive connections; each send within
 * its deadline; the collector's first failure warned of, its recovery told.
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
 * Effect's serializations, each signal's in its protocol, spans encoded with the access log's
 * redaction applied (SpanRedaction.ts): what the server and the services recorded is redacted
 * once, as it leaves, whatever set it (attributes, events, status, the resource).
 */
const redactingSerialization = (settings: OtlpSettings) => {
  const serialization = (protocol: OtlpProtocol) =>
    Effect.provide(Effect.service(OtlpSerialization.OtlpSerialization), protocol === "http/json" ? OtlpSerialization.layerJson : OtlpSerialization.layerProtobuf)
  return Layer.effect(
    OtlpSerialization.OtlpSerialization,
    Effect.gen(function*() {
      const [spans, metrics] = [yield* serialization(settings.tracesProtocol), yield* serialization(settings.metricsProtocol)]
      return { ...metrics, traces: (data) => spans.traces(redactTraces(data)) }
    })
  )
}

/**
 * What the OTEL_* variables mean when they are unset, beneath the environment: the endpoint
 * alone exports traces and metrics, and the service is `chamber` unless OTEL_SERVICE_NAME or
 * OTEL_RESOURCE_ATTRIBUTES names it.
 */
const defaults = (env: Readonly<Record<string, string | undefined>>) =>
  ConfigProvider.layerAdd(ConfigProvider.fromUnknown({
    OTEL_TRACES_EXPORTER: "otlp",
    OTEL_METRICS_EXPORTER: "otlp",
    ...(/(?:^|,)\s*service\.name\s*=/.test(env.OTEL_RESOURCE_ATTRIBUTES ?? "") ? {} : { OTEL_SERVICE_NAME: "chamber" })
  }))

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
export const otlpExport = (settings: OtlpSettings, env: Readonly<Record<string, string | undefined>> = process.env) => {
  const tracer = Layer.effect(Tracer.Tracer, Effect.map(Effect.service(Tracer.Tracer), (t) => sampling(t, settings.ratio))).pipe(
    Layer.provide(OtlpTracer.layerFromConfig())
  )
  // URLs are recorded as sent, then redacted as they leave by the access log's rule (which
  // covers Effect's own list of names), so a span's `url.*` shows `[redacted]` where the log does.
  const urlsAsSent = Layer.succeed(UrlParams.CurrentRedactedNames)([])
  return Layer.mergeAll(tracer, OtlpMetrics.layerFromConfig(), requestSampling(settings.ratio), urlsAsSent).pipe(
    Layer.provide([collectorClient(settings.endpoint), redactingSerialization(settings), defaults(env)])
  )
}
