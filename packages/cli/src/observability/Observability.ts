/**
 * What operators see of `chamber serve` and `chamber relay` (docs/operations.md "Metrics" and
 * "Traces", ruling 33): CHAMBER_METRICS_PORT serves Prometheus text, OTEL_EXPORTER_OTLP_ENDPOINT
 * exports spans and metrics. With neither set, nothing is measured and nothing runs.
 */
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import { WebhookAdmin } from "@chamber/core"
import { RequestMetricsOn } from "@chamber/http-adapter"
import { WebhookAdminSql } from "@chamber/pg-adapter"
import { readBacklog } from "./BacklogMetrics.ts"
import { metricsListener } from "./MetricsListener.ts"
import { makeProcessMetrics } from "./ProcessMetrics.ts"

export type OtlpProtocol = "http/protobuf" | "http/json"

/**
 * What `chamber serve` and `chamber relay` read of the OTEL_* variables themselves: whether an
 * endpoint is set at all, and what Effect's exporters leave to the application (the protocols
 * and the sampling ratio). The rest (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES,
 * OTEL_EXPORTER_OTLP_HEADERS, the intervals, batch sizes, timeouts and compression) Effect's
 * OtlpTracer and OtlpMetrics read.
 */
export interface OtlpSettings {
  /** OTEL_EXPORTER_OTLP_ENDPOINT, as set: the collector named in the warning when it does not answer. */
  readonly endpoint: string
  /** OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL, else `http/json`. */
  readonly tracesProtocol: OtlpProtocol
  /** OTEL_EXPORTER_OTLP_METRICS_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL, else `http/protobuf`. */
  readonly metricsProtocol: OtlpProtocol
  /** OTEL_TRACES_SAMPLER_ARG: the share of requests (root spans) traced, from 0 to 1; their children follow them. */
  readonly ratio: number
}

export class ObservabilityConfigError extends Error {}

/**
 * A signal's protocol: its own variable, else OTEL_EXPORTER_OTLP_PROTOCOL, else `fallback`.
 * Spans default to `http/json` (one export item a span, several spans a request: Effect's
 * protobuf encoder costs several times its JSON one, bench/README.md "OTLP export"); metrics, a
 * few exports a minute, to OpenTelemetry's default `http/protobuf`.
 */
const protocolFromEnv = (env: Readonly<Record<string, string | undefined>>, signal: "TRACES" | "METRICS", fallback: OtlpProtocol): OtlpProtocol => {
  for (const name of [`OTEL_EXPORTER_OTLP_${signal}_PROTOCOL`, "OTEL_EXPORTER_OTLP_PROTOCOL"]) {
    const protocol = env[name]?.trim()
    if (protocol === undefined || protocol === "") continue
    if (protocol !== "http/protobuf" && protocol !== "http/json") throw new ObservabilityConfigError(`${name} must be http/protobuf or http/json, not "${protocol}".`)
    return protocol
  }
  return fallback
}

/** The settings, or undefined when OTEL_EXPORTER_OTLP_ENDPOINT is unset or empty; throws an error naming a bad variable. */
const otlpFromEnv = (env: Readonly<Record<string, string | undefined>>): OtlpSettings | undefined => {
  const endpoint = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim()
  if (endpoint === undefined || endpoint === "") return undefined
  if (!URL.canParse(endpoint) || !/^https?:$/.test(new URL(endpoint).protocol)) {
    throw new ObservabilityConfigError(`OTEL_EXPORTER_OTLP_ENDPOINT must be an http or https URL, not "${endpoint}".`)
  }
  const tracesProtocol = protocolFromEnv(env, "TRACES", "http/json")
  const metricsProtocol = protocolFromEnv(env, "METRICS", "http/protobuf")
  const ratioText = env.OTEL_TRACES_SAMPLER_ARG?.trim()
  const ratio = ratioText === undefined || ratioText === "" ? 1 : Number(ratioText)
  if (!(ratio >= 0 && ratio <= 1)) throw new ObservabilityConfigError(`OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1, not "${ratioText}".`)
  return { endpoint, tracesProtocol, metricsProtocol, ratio }
}

export interface ObservabilitySettings {
  /** CHAMBER_METRICS_PORT; undefined: no metrics listener. */
  readonly metricsPort: number | undefined
  /** CHAMBER_METRICS_HOST: the metrics listener's address, 127.0.0.1 unless set (never the API's HOST). */
  readonly metricsHost: string
  readonly otlp: OtlpSettings | undefined
}

/** OtlpMetrics's interval between exports when OTEL_METRIC_EXPORT_INTERVAL is unset. */
const METRIC_EXPORT_INTERVAL_MS = 10_000

/** Where the metrics listener binds unless CHAMBER_METRICS_HOST says otherwise: this machine only. */
export const DEFAULT_METRICS_HOST = "127.0.0.1"

/** Reads CHAMBER_METRICS_PORT, CHAMBER_METRICS_HOST and the OTEL_* variables; throws an error naming a bad one. */
export const observabilityFromEnv = (env: Readonly<Record<string, string | undefined>> = process.env): ObservabilitySettings => {
  const text = env.CHAMBER_METRICS_PORT?.trim()
  let metricsPort: number | undefined
  if (text !== undefined && text !== "") {
    metricsPort = Number(text)
    if (!/^\d{1,5}$/.test(text) || metricsPort > 65535) throw new ObservabilityConfigError(`CHAMBER_METRICS_PORT must be a whole number from 0 to 65535, not "${text}".`)
  }
  const metricsHost = env.CHAMBER_METRICS_HOST?.trim() || DEFAULT_METRICS_HOST
  return { metricsPort, metricsHost, otlp: otlpFromEnv(env) }
}

export const observing = (settings: ObservabilitySettings) => settings.metricsPort !== undefined || settings.otlp !== undefined

/**
 * The listener and exporters `settings` ask for, and the readings of process metrics and
 * backlog they take before each scrape or export. Needs the storage (SqlClient). `telemetry`
 * is to be provided to what is measured (the HTTP server, the relay): the tracer and
 * RequestMetricsOn; `readers` runs beside it.
 */
export const observability = (
  settings: ObservabilitySettings,
  onListening: (url: string) => Effect.Effect<void>
) => {
  if (!observing(settings)) return { telemetry: Layer.empty, readers: Layer.empty }
  const readers = Layer.unwrap(Effect.gen(function*() {
    const admin = yield* WebhookAdmin
    const process = yield* Effect.acquireRelease(Effect.sync(makeProcessMetrics), (p) => Effect.sync(p.stop))
    const read = Effect.andThen(Effect.sync(process.read), readBacklog(admin))
    const listener = settings.metricsPort === undefined ? Layer.empty : metricsListener({ host: settings.metricsHost, port: settings.metricsPort, read, onListening })
    // OTLP exports what the gauges hold at each interval (OTEL_METRIC_EXPORT_INTERVAL, as
    // Effect's OtlpMetrics reads it): they are read on the same beat.
    const reading = settings.otlp === undefined
      ? Layer.empty
      : Layer.effectDiscard(Effect.gen(function*() {
        const interval = yield* Config.Int("OTEL_METRIC_EXPORT_INTERVAL").pipe(Config.withDefault(METRIC_EXPORT_INTERVAL_MS), Effect.orDie)
        yield* Effect.forkScoped(Effect.repeat(read, Schedule.spaced(interval)))
      }))
    return Layer.mergeAll(listener, reading)
  })).pipe(Layer.provide(WebhookAdminSql))
  // The exporters' modules are loaded only when they are used.
  const otlp = settings.otlp
  const exported = otlp === undefined ? Layer.empty : Layer.unwrap(Effect.map(Effect.promise(() => import("./OtlpExport.ts")), (m) => m.otlpExport(otlp)))
  return {
    telemetry: Layer.mergeAll(exported, Layer.succeed(RequestMetricsOn)(true)),
    readers
  }
}
