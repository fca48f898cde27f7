/**
 * The port of what an operator sees and does with webhooks (docs/cli.md "Webhooks"; pg-adapter
 * `WebhookAdminSql` implements it): subscriptions with their health, deliveries with their
 * attempts, reactivation, and replay: a delivery queued again with its event id (signed afresh
 * when sent), its earlier attempts kept.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"

/** A subscription as an operator sees it: its chamber and health. */
export interface HookView {
  readonly id: number
  readonly tenant: string
  readonly url: string
  readonly events: ReadonlyArray<string>
  readonly active: boolean
  readonly failure_count: number
  readonly last_failure_at: string | null
  readonly last_success_at: string | null
  readonly created_at: string
  /** As GET /api/v1/hooks/{hook} says it: 20 less the failure count while active, 0 once inactive. */
  readonly failures_before_deactivation: number
}

export interface AttemptView {
  readonly attempted_at: string
  readonly status: number | null
  readonly latency_ms: number
  readonly response_excerpt: string | null
  readonly error: string | null
}

export interface DeliveryView {
  readonly id: number
  readonly hook_id: number
  readonly url: string
  readonly event_id: string
  readonly type: string
  readonly status: "pending" | "succeeded" | "failed"
  readonly attempt_count: number
  readonly next_attempt_at: string | null
  readonly created_at: string
  readonly attempts: ReadonlyArray<AttemptView>
}

export interface DeliveryFilter {
  readonly tenant?: string | undefined
  readonly hookId?: number | undefined
  readonly status?: "pending" | "failed" | "succeeded" | undefined
  readonly since?: string | undefined
  /** Only these deliveries (the admin TUI follows the ones it replayed, docs/admin.md). */
  readonly ids?: ReadonlyArray<number> | undefined
  readonly limit?: number | undefined
}

/** A subscription's latest attempts, oldest first: true for a 2xx answer (the TUI's sparkline, docs/admin.md). */
export interface RecentAttempts {
  readonly hook_id: number
  readonly ok: ReadonlyArray<boolean>
}

/** The whole database's webhook backlog (docs/operations.md "Metrics"; `chamber deliveries summary`). */
export interface Backlog {
  /** Pending deliveries whose next attempt is due now. */
  readonly due: number
  /** How long the longest-waiting due delivery has been due, in seconds; 0 when none is. */
  readonly oldest_due_seconds: number
  /** Pending deliveries waiting behind an earlier one of their subscription and resource (ruling 32), due or not. */
  readonly held: number
  readonly active_subscriptions: number
  readonly inactive_subscriptions: number
}

/** One subscription's share of the backlog (the admin TUI's Backlog screen, docs/admin.md). */
export interface SubscriptionBacklog {
  readonly id: number
  readonly url: string
  readonly active: boolean
  readonly failure_count: number
  /** Pending deliveries whose next attempt is due now (held ones among them). */
  readonly due: number
  /** How long its longest-waiting due delivery has been due, in seconds; 0 when none is. */
  readonly oldest_due_seconds: number
  /** Pending deliveries waiting behind an earlier one of the same resource. */
  readonly held: number
  /** Pending deliveries not due yet: retries waiting for their time. */
  readonly later: number
}

export class WebhookAdmin extends Context.Service<WebhookAdmin, {
  readonly hooks: (tenant: string) => Effect.Effect<ReadonlyArray<HookView>>
  readonly hook: (id: number) => Effect.Effect<HookView | undefined>
  /** Active again with its count at 0; false when there is no such subscription. */
  readonly reactivate: (id: number) => Effect.Effect<boolean>
  /** Newest first, each with its attempts, oldest attempt first. */
  readonly deliveries: (filter: DeliveryFilter) => Effect.Effect<ReadonlyArray<DeliveryView>>
  /** Every subscription of the tenant with the last `count` attempts of its `count` newest deliveries. */
  readonly recentAttempts: (tenant: string, count: number) => Effect.Effect<ReadonlyArray<RecentAttempts>>
  /** Queues deliveries again, due now with a fresh set of retries; the ids it queued. */
  readonly replay: (ids: ReadonlyArray<number>) => Effect.Effect<ReadonlyArray<number>>
  /** The whole database's backlog (the metrics' gauges, `chamber deliveries summary`). */
  readonly backlog: Effect.Effect<Backlog>
  /** Each subscription of the tenant with its share of the backlog, the longest-waiting first. */
  readonly backlogOf: (tenant: string) => Effect.Effect<ReadonlyArray<SubscriptionBacklog>>
}>()("chamber/WebhookAdmin") {}
