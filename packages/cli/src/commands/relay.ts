/**
 * `chamber relay` (docs/cli.md "Serving"): a webhook relay alone, for running several beside the
 * servers. Stops gracefully on SIGINT/SIGTERM: sends in flight finish (within
 * CHAMBER_SHUTDOWN_TIMEOUT) and the deliveries it holds are given back. Like serve, it does not
 * start when the stored webhook secrets are encrypted with a key it lacks.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import { databaseConfigFromEnv, DeliveryStoreSql, StorageLive } from "@chamber/pg-adapter"
import { deliverySettingsFromEnv, RelayLive } from "@chamber/webhook-relay"
import { parseDuration } from "../Durations.ts"
import { dim, fail } from "../Output.ts"
import { runUntilStopped } from "../Run.ts"
import { linesLogger, printLine } from "../LogLines.ts"
import { observability, observabilityFromEnv } from "../observability/Observability.ts"
import { storedSecretsChecked } from "../StoredSecrets.ts"

export const relay = (opts: { readonly json?: boolean }) => {
  const json = opts.json === true
  let settings, config, observed
  try {
    settings = deliverySettingsFromEnv()
    config = databaseConfigFromEnv()
    observed = observabilityFromEnv()
  } catch (error) {
    return fail(json, error)
  }
  const timeoutText = process.env.CHAMBER_SHUTDOWN_TIMEOUT ?? "30s"
  const stopTimeout = parseDuration(timeoutText)
  if (stopTimeout === undefined) return fail(json, new Error(`CHAMBER_SHUTDOWN_TIMEOUT must be a duration such as 30s, not "${timeoutText}".`))
  const listen = config._tag === "Postgres"
  // What it tells the operator and its log lines (through `chamber serve`'s logger, which redacts
  // keys and secrets, docs/cli.md "Logs") share stdout, in order.
  const say = (text: string, fields: Record<string, unknown>) =>
    Effect.sync(() => printLine(json ? JSON.stringify({ message: text, ...fields }) : dim(text)))
  // Metrics and traces (docs/operations.md "Metrics and traces"), on CHAMBER_METRICS_HOST.
  const { telemetry, readers } = observability(observed, (url) => say(`Metrics on ${url}`, { metrics: url }))
  const app = Layer.mergeAll(
    RelayLive({ settings, listen, stopTimeoutMs: Duration.toMillis(stopTimeout) }).pipe(Layer.provide(DeliveryStoreSql), Layer.provide(telemetry)),
    readers,
    Layer.effectDiscard(say(`Webhook relay running (${listen ? "woken by LISTEN/NOTIFY" : "polling every second"}); Ctrl-C stops it.`, {
      pid: process.pid,
      listen
    }))
  ).pipe(
    Layer.provide(storedSecretsChecked((text, _message, fields) => say(text, fields))),
    Layer.provide(StorageLive(config)),
    Layer.provide(Logger.layer([linesLogger(json ? "json" : "text")]))
  )
  return runUntilStopped(Layer.launch(app), json, {
    stopped: () => (Effect.runSync(say("Webhook relay stopped.", {})), 0)
  })
}
