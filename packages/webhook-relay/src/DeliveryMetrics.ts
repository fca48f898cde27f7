/**
 * What the relay counts for operators (docs/operations.md "Metrics", ruling 33): attempts by
 * outcome, how long each took, and, for a delivered event, the time from its commit to the 2xx.
 * No label carries a chamber, a subscription or a delivery.
 */
import * as Context from "effect/Context"
import * as Metric from "effect/Metric"
import type { SendFailure } from "./Sender.ts"

/** An attempt's outcome: a 2xx; refused by the destination guard; no answer in time; anything else. */
export type AttemptKind = "succeeded" | "failed" | "refused" | "timeout"

const attemptsOf = (outcome: AttemptKind) =>
  Metric.counter("chamber_webhook_attempts_total", {
    description: "Webhook delivery attempts, by outcome: succeeded (a 2xx), failed, refused (a forbidden destination), timeout.",
    incremental: true,
    attributes: { outcome }
  })
const attempts: Record<AttemptKind, Metric.Counter<number>> = {
  succeeded: attemptsOf("succeeded"),
  failed: attemptsOf("failed"),
  refused: attemptsOf("refused"),
  timeout: attemptsOf("timeout")
}

// Every outcome is reported from the start, at 0, so a rate over it has a beginning.
for (const counter of Object.values(attempts)) counter.updateUnsafe(0, Context.empty())

const attemptDuration = Metric.histogram("chamber_webhook_attempt_duration_seconds", {
  description: "How long one webhook attempt took, from connecting to the end of the answer (or the failure).",
  boundaries: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]
})

const deliveryLag = Metric.histogram("chamber_webhook_delivery_lag_seconds", {
  description: "From an event's commit to the 2xx that delivered it, retries included.",
  boundaries: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 21600, 86400]
})

export const attemptKind = (ok: boolean, failure: SendFailure | null): AttemptKind =>
  ok ? "succeeded" : failure === "refused-destination" ? "refused" : failure === "timeout" ? "timeout" : "failed"

/** One attempt counted; a delivered one also gives its lag from `committedAt` (an ISO time) to `answeredAt` (ms since the epoch). */
export const countAttempt = (kind: AttemptKind, latencyMs: number, committedAt: string, answeredAt: number): void => {
  const context = Context.empty()
  attempts[kind].updateUnsafe(1, context)
  attemptDuration.updateUnsafe(latencyMs / 1000, context)
  if (kind === "succeeded") {
    const committed = Date.parse(committedAt)
    if (Number.isFinite(committed)) deliveryLag.updateUnsafe(Math.max(0, answeredAt - committed) / 1000, context)
  }
}
