/**
 * The webhook backlog as gauges (docs/operations.md "Metrics"), read from the database when
 * metrics are scraped or exported: due deliveries, how long the oldest has been due, and
 * subscriptions by state. The figures are the whole database's, the same in every process.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import type { Backlog, WebhookAdmin } from "@chamber/core"

const due = Metric.gauge("chamber_webhook_due_deliveries", { description: "Pending webhook deliveries whose attempt is due now." })
const oldestDue = Metric.gauge("chamber_webhook_oldest_due_seconds", {
  description: "How long the longest-waiting due webhook delivery has been due, in seconds (0 when none is)."
})
const subscriptionsOf = (state: "active" | "inactive") =>
  Metric.gauge("chamber_webhook_subscriptions", { description: "Webhook subscriptions, by state (active, inactive).", attributes: { state } })
const active = subscriptionsOf("active")
const inactive = subscriptionsOf("inactive")

const set = (backlog: Backlog) => {
  const context = Context.empty()
  due.updateUnsafe(backlog.due, context)
  oldestDue.updateUnsafe(backlog.oldest_due_seconds, context)
  active.updateUnsafe(backlog.active_subscriptions, context)
  inactive.updateUnsafe(backlog.inactive_subscriptions, context)
}

/** How long a reading may take: a scrape never waits on a database that does not answer. */
const READ_TIMEOUT_MS = 2_000

/** Reads the backlog into the gauges; while the database does not answer, they keep their last values (each failed reading logged). */
export const readBacklog = (admin: WebhookAdmin["Service"]): Effect.Effect<void> =>
  admin.backlog.pipe(
    Effect.timeout(READ_TIMEOUT_MS),
    Effect.map(set),
    Effect.catchCause((cause) => Effect.logWarning("metrics: the webhook backlog could not be read; its gauges keep their last values", cause))
  )
