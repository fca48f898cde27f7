/**
 * What operators see of `chamber serve` and `chamber relay` (docs/operations.md "Metrics" and
 * "Traces", ruling 33): CHAMBER_METRICS_PORT serves Prometheus text, OTEL_EXPORTER_OTLP_ENDPOINT
 * exports spans and metrics. With neither set, nothing is measured and nothing runs.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import { WebhookAdmin } from "@chamber/core"
import { RequestMetricsOn } from "@chamber/http-adapter"
import { WebhookAdminSql } from "@chamber/pg-adapter"
import { readBacklog } from "./BacklogMetrics.ts"
import { metricsListener } from "./MetricsListener.ts"
import { type OtlpSettings, otlpSettingsFromEnv } from "./OtlpSettings.ts"
import { makeProcessMetrics } from "./ProcessMetrics.ts"

export interface ObservabilitySettings {
  /** CHAMBER_METRICS_PORT; undefined: no metrics listener. */
  readonly metricsPort: number | undefined
  /** CHAMBER_METRICS_HOST: the metrics listener's address, 127.0.0.1 unless set (never the API's HOST). */
  readonly metricsHost: string
  readonly otlp: OtlpSettings | undefined
}

/** Where the metrics listener binds unless CHAMBER_METRICS_HOST says otherwise: this machine only. */
export const DEFAULT_METRICS_HOST = "127.0.0.1"

/** Reads CHAMBER_METRICS_PORT, CHAMBER_METRICS_HOST and the OTEL_* variables; throws an error naming a bad one. */
export const observabilityFromEnv = (env: Readonly<Record<string, string | undefined>> = process.env): ObservabilitySettings => {
  const text = env.CHAMBER_METRICS_PORT?.trim()
  let metricsPort: number | undefined
  if (text !== undefined && text !== "") {
    metricsPort = Number(text)
    if (!/^\d{1,5}$/.test(text) || metricsPort > 65535) throw new Error(`CHAMBER_METRICS_PORT must be a whole number from 0 to 65535, not "${text}".`)
  }
  const metricsHost = env.CHAMBER_METRICS_HOST?.trim() || DEFAULT_METRICS_HOST
  return { metricsPort, metricsHost, otlp: otlpSettingsFromEnv(env) }
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
    // OTLP exports what the gauges hold at each interval: they are read on the same beat.
    const reading = settings.otlp === undefined
      ? Layer.empty
      : Layer.effectDiscard(Effect.forkScoped(Effect.repeat(read, Schedule.spaced(settings.otlp.metricsIntervalMs))))
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
