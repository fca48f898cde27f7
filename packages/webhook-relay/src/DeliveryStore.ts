/**
 * The relay's side of the delivery tables (docs/webhooks.md "Delivery"): claim due deliveries
 * with `FOR UPDATE SKIP LOCKED` and a lease, so many relays share one database and a crashed
 * relay's deliveries are claimed again when its lease runs out; record attempts and settle
 * deliveries in one transaction per batch, counting failed deliveries per subscription atomically.
 */
import { Array as Arr, Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { type EventKind, type OutboxEvent, WebhookSecrets } from "@chamber/core"
import { isoColumn } from "./IsoColumn.ts"
import { RETRIES_PER_DELIVERY } from "./Schedule.ts"

/** A delivery this relay holds the lease of. */
export interface ClaimedDelivery {
  readonly id: number
  readonly tenantId: number
  readonly hookId: number
  readonly url: string
  readonly secret: string
  /** Attempts made before this one. */
  readonly attemptCount: number
  readonly event: OutboxEvent
}

/** What one attempt came to. */
export interface AttemptOutcome {
  readonly delivery: ClaimedDelivery
  readonly attemptedAt: Date
  readonly ok: boolean
  readonly status: number | null
  readonly latencyMs: number
  readonly responseExcerpt: string | null
  readonly error: string | null
  readonly retryAfterSeconds: number | null
}

export interface ClaimOptions {
  readonly relayId: string
  readonly limit: number
  readonly leaseMs: number
  /** At most this many deliveries of one subscription leased at once, across all relays. */
  readonly perSubscription: number
}

/** Consecutive failed deliveries that deactivate a subscription (spec section 6.2). */
export const DEACTIVATE_AT = 20

export class DeliveryStore extends Context.Service<DeliveryStore, {
  readonly claim: (options: ClaimOptions) => Effect.Effect<ReadonlyArray<ClaimedDelivery>>
  /**
   * Records each attempt and settles its delivery: succeeded; pending again after
   * `retryDelayMs(retryIndex, retryAfterSeconds)` while retries remain; else failed, counted
   * against its subscription. A delivery whose lease `relayId` lost meanwhile (another relay
   * claimed it) keeps its attempt but is not settled here.
   */
  readonly record: (
    relayId: string,
    outcomes: ReadonlyArray<AttemptOutcome>,
    retryDelayMs: (retryIndex: number, retryAfterSeconds: number | null) => number
  ) => Effect.Effect<void>
  /** Gives back every lease of `relayId` (a graceful stop); how many. */
  readonly release: (relayId: string) => Effect.Effect<number>
  /** Deletes up to `batch` settled deliveries (their attempts with them) settled more than `retentionMs` ago; how many. */
  readonly prune: (retentionMs: number, batch: number) => Effect.Effect<number>
}>()("chamber/DeliveryStore") {}

interface ClaimRow {
  readonly id: string
  readonly tenant_id: string
  readonly hook_id: string
  readonly url: string
  readonly secret: string
  readonly attempt_count: number
  readonly event_id: string
  readonly type: EventKind
  readonly created_at: string
  readonly payload: unknown
}

export const DeliveryStoreSql = Layer.effect(DeliveryStore, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const secrets = yield* WebhookSecrets

  const claim = (o: ClaimOptions) =>
    sql<ClaimRow>`
      WITH busy AS (
        SELECT hook_id, count(*) AS n FROM webhook_deliveries
        WHERE status = 'pending' AND lease_expires_at > now() GROUP BY hook_id
      ), due AS (
        SELECT d.id, d.next_attempt_at,
               row_number() OVER (PARTITION BY d.hook_id ORDER BY d.next_attempt_at, d.id) + coalesce(b.n, 0) AS place
        FROM webhook_deliveries d
        JOIN webhook_subscriptions s ON s.id = d.hook_id AND s.active
        LEFT JOIN busy b ON b.hook_id = d.hook_id
        WHERE d.status = 'pending' AND d.next_attempt_at <= now()
          AND (d.lease_expires_at IS NULL OR d.lease_expires_at <= now())
      ), picked AS (
        -- The conditions again on the row itself: a row another relay leased and committed between
        -- this statement's snapshot and its lock is checked afresh (and skipped), never leased twice.
        SELECT d.id FROM webhook_deliveries d
        WHERE d.id IN (SELECT id FROM due WHERE place <= ${o.perSubscription} ORDER BY next_attempt_at, id LIMIT ${o.limit})
          AND d.status = 'pending' AND (d.lease_expires_at IS NULL OR d.lease_expires_at <= now())
        FOR UPDATE SKIP LOCKED
      )
      UPDATE webhook_deliveries d
      SET lease_expires_at = now() + ${o.leaseMs} * interval '1 millisecond', leased_by = ${o.relayId}
      FROM picked, outbox_events e, webhook_subscriptions s
      WHERE d.id = picked.id AND e.id = d.event_id AND s.id = d.hook_id
      RETURNING d.id::text, d.tenant_id::text, d.hook_id::text, s.url, s.secret, d.attempt_count,
        e.event_id, e.type, ${sql.literal(isoColumn("e.created_at"))} AS created_at, e.payload`.pipe(
      Effect.map((rows) =>
        rows.map((r): ClaimedDelivery => ({
          id: Number(r.id),
          tenantId: Number(r.tenant_id),
          hookId: Number(r.hook_id),
          url: r.url,
          secret: secrets.open(r.secret),
          attemptCount: r.attempt_count,
          event: { id: r.event_id, tenant_id: Number(r.tenant_id), type: r.type, created_at: r.created_at, data: r.payload }
        }))
      ),
      Effect.orDie
    )

  const record = (
    relayId: string,
    outcomes: ReadonlyArray<AttemptOutcome>,
    retryDelayMs: (retryIndex: number, retryAfterSeconds: number | null) => number
  ) => {
    const attempts = outcomes.map((o): Record<string, unknown> => ({
      tenant_id: o.delivery.tenantId,
      delivery_id: o.delivery.id,
      attempted_at: o.attemptedAt,
      status: o.status,
      latency_ms: Math.round(o.latencyMs),
      response_excerpt: o.responseExcerpt,
      error: o.error
    }))
    if (!Arr.isReadonlyArrayNonEmpty(attempts)) return Effect.void
    return sql.withTransaction(Effect.gen(function*() {
      yield* sql`INSERT INTO webhook_attempts ${sql.insert(attempts)}`
      // Each delivery: succeeded, pending again (a retry is left), or failed.
      const settled = outcomes.map((o) => {
        const attempts = o.delivery.attemptCount + 1
        const state = o.ok ? "succeeded" : attempts <= RETRIES_PER_DELIVERY ? "pending" : "failed"
        // Counted from the attempt's end, when its answer (and any Retry-After) arrived.
        const ended = o.attemptedAt.getTime() + o.latencyMs
        const next = state === "pending" ? new Date(ended + retryDelayMs(attempts - 1, o.retryAfterSeconds)) : null
        return { id: o.delivery.id, state, attempts, next: next?.toISOString() ?? null }
      })
      const held = yield* sql<{ readonly id: string }>`
        UPDATE webhook_deliveries d
        SET status = v.state, attempt_count = v.attempts, lease_expires_at = NULL, leased_by = NULL,
            next_attempt_at = coalesce(v.next::timestamptz, d.next_attempt_at),
            settled_at = CASE WHEN v.state = 'pending' THEN NULL ELSE now() END
        FROM jsonb_to_recordset(${JSON.stringify(settled)}::jsonb) AS v(id bigint, state text, attempts integer, next text)
        WHERE d.id = v.id AND d.leased_by = ${relayId}
        RETURNING d.id::text`
      const stillOurs = new Set(held.map((r) => Number(r.id)))
      // Each subscription, in the order its deliveries settled: a success resets the count, a
      // failed delivery adds one; at DEACTIVATE_AT it is inactive, the last failure time kept.
      const bySubscription = new Map<number, { reset: boolean; failures: number; success: Date | null; failure: Date | null }>()
      outcomes.forEach((o, i) => {
        const state = settled[i]!.state
        if (state === "pending" || !stillOurs.has(o.delivery.id)) return
        const s = bySubscription.get(o.delivery.hookId) ?? { reset: false, failures: 0, success: null, failure: null }
        if (state === "succeeded") bySubscription.set(o.delivery.hookId, { ...s, reset: true, failures: 0, success: o.attemptedAt })
        else bySubscription.set(o.delivery.hookId, { ...s, failures: s.failures + 1, failure: o.attemptedAt })
      })
      // All of the batch's subscriptions in one statement.
      const counts = [...bySubscription].map(([id, s]) => ({
        id,
        reset: s.reset,
        failures: s.failures,
        success: s.success?.toISOString() ?? null,
        failure: s.failure?.toISOString() ?? null
      }))
      if (counts.length > 0) {
        yield* sql`
          UPDATE webhook_subscriptions h
          SET failure_count = CASE WHEN v.reset THEN 0 ELSE h.failure_count END + v.failures,
              active = h.active AND (CASE WHEN v.reset THEN 0 ELSE h.failure_count END + v.failures) < ${DEACTIVATE_AT},
              last_success_at = coalesce(v.success::timestamptz, h.last_success_at),
              last_failure_at = coalesce(v.failure::timestamptz, h.last_failure_at),
              updated_at = now()
          FROM jsonb_to_recordset(${JSON.stringify(counts)}::jsonb) AS v(id bigint, reset boolean, failures integer, success text, failure text)
          WHERE h.id = v.id`
      }
    })).pipe(Effect.orDie)
  }

  const release = (relayId: string) =>
    sql`UPDATE webhook_deliveries SET lease_expires_at = NULL, leased_by = NULL
        WHERE leased_by = ${relayId} AND status = 'pending' RETURNING id`.pipe(Effect.map((rows) => rows.length), Effect.orDie)

  const prune = (retentionMs: number, batch: number) =>
    sql`DELETE FROM webhook_deliveries WHERE id IN (
          SELECT id FROM webhook_deliveries
          WHERE status <> 'pending' AND settled_at < now() - ${retentionMs} * interval '1 millisecond'
          ORDER BY settled_at LIMIT ${batch})
        RETURNING id`.pipe(Effect.map((rows) => rows.length), Effect.orDie)

  return DeliveryStore.of({ claim, record, release, prune })
}))
