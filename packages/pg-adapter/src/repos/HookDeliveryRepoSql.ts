/**
 * A subscription's deliveries as its integrator sees them (docs/webhooks.md "Deliveries"), every
 * statement scoped by tenant and subscription. Replay and recovery queue deliveries again the way
 * the relay's own retries do: pending, due now, no lease, attempt count 0 (a fresh set of
 * retries), earlier attempts kept.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import { type DeliveryStatus, type HookDelivery, HookDeliveryRepo, type HookDeliveryAttempt, PER_PAGE, pageOffset } from "@chamber/core"
import { isoColumn as iso } from "./IsoColumn.ts"
import { andShownDelivery, ImportSlices, shownDelivery } from "./HeldRows.ts"

interface DeliveryRow {
  readonly id: number
  readonly event_id: string
  readonly type: string
  readonly status: DeliveryStatus
  readonly attempt_count: number
  readonly next_attempt_at: string | null
  readonly attempts: ReadonlyArray<HookDeliveryAttempt>
  readonly created_at: string
  readonly updated_at: string
}

/** A delivery's envelope columns: attempts oldest first (json, which keeps their keys in order); updated by its last attempt, settling or queueing. */
const ENVELOPE = `d.id::int AS id, e.event_id, e.type, d.status, d.attempt_count,
  CASE WHEN d.status = 'pending' THEN ${iso("d.next_attempt_at")} END AS next_attempt_at,
  coalesce((SELECT json_agg(json_build_object(
      'attempted_at', ${iso("a.attempted_at")}, 'status_code', a.status, 'latency_ms', a.latency_ms,
      'error', a.error, 'response_excerpt', a.response_excerpt) ORDER BY a.id)
    FROM webhook_attempts a WHERE a.delivery_id = d.id), '[]'::json) AS attempts,
  ${iso("d.created_at")} AS created_at,
  ${iso("greatest(d.created_at, d.settled_at, d.queued_at, (SELECT max(a.attempted_at) FROM webhook_attempts a WHERE a.delivery_id = d.id))")} AS updated_at`

const toDelivery = (r: DeliveryRow): HookDelivery => ({
  id: r.id,
  attributes: {
    event_id: r.event_id,
    type: r.type,
    status: r.status,
    attempt_count: r.attempt_count,
    next_attempt_at: r.next_attempt_at,
    attempts: r.attempts
  },
  created_at: r.created_at,
  updated_at: r.updated_at
})

export const HookDeliveryRepoSql = Layer.effect(HookDeliveryRepo, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const sliced = yield* ImportSlices

  const page = (tenantId: number, hookId: number, status: DeliveryStatus | undefined, page: number) => {
    const where = sql.and([
      sql`d.tenant_id = ${tenantId}`,
      sql`d.hook_id = ${hookId}`,
      status === undefined ? sql`true` : sql`d.status = ${status}`,
      ...(sliced ? [sql.literal(shownDelivery(true, "d"))] : [])
    ])
    return Effect.all([
      sql<{ readonly total: string }>`SELECT count(*)::text AS total FROM webhook_deliveries d WHERE ${where}`,
      sql<DeliveryRow>`
        SELECT ${sql.literal(ENVELOPE)} FROM webhook_deliveries d JOIN outbox_events e ON e.id = d.event_id
        WHERE ${where} ORDER BY d.id DESC LIMIT ${PER_PAGE} OFFSET ${pageOffset(page)}`
    ]).pipe(
      Effect.map(([[count], rows]) => ({ rows: rows.map(toDelivery), total: Number(count?.total ?? 0) })),
      Effect.orDie
    )
  }

  const one = (deliveryId: number) =>
    sql<DeliveryRow>`SELECT ${sql.literal(ENVELOPE)} FROM webhook_deliveries d JOIN outbox_events e ON e.id = d.event_id WHERE d.id = ${deliveryId}`

  // A delivery of an import not yet published is no delivery of the subscription's yet (HeldRows.ts).
  const replay = (tenantId: number, hookId: number, deliveryId: number) =>
    sql`
      UPDATE webhook_deliveries d SET status = 'pending', attempt_count = 0, next_attempt_at = now(), queued_at = now(),
        lease_expires_at = NULL, leased_by = NULL, settled_at = NULL
      WHERE d.tenant_id = ${tenantId} AND d.hook_id = ${hookId} AND d.id = ${deliveryId}${sql.literal(andShownDelivery(sliced, "d"))}
      RETURNING d.id`.pipe(
      Effect.flatMap((queued) => (queued.length === 0 ? Effect.succeed([]) : one(deliveryId))),
      Effect.map((rows) => (rows[0] === undefined ? undefined : toDelivery(rows[0]))),
      Effect.orDie
    )

  // Due one microsecond apart in the order they were created, so the oldest goes out first.
  const recover = (tenantId: number, hookId: number, since: string, until: string | undefined) =>
    sql<{ readonly id: string }>`
      WITH picked AS (
        SELECT id, row_number() OVER (ORDER BY created_at, id) AS n FROM webhook_deliveries
        WHERE tenant_id = ${tenantId} AND hook_id = ${hookId} AND status = 'failed'
          AND created_at >= ${since}::timestamptz AND (${until ?? null}::timestamptz IS NULL OR created_at <= ${until ?? null}::timestamptz)
      )
      UPDATE webhook_deliveries d SET status = 'pending', attempt_count = 0, queued_at = now(),
        next_attempt_at = now() + (p.n - 1) * interval '1 microsecond',
        lease_expires_at = NULL, leased_by = NULL, settled_at = NULL
      FROM picked p WHERE d.id = p.id
      RETURNING d.id::text AS id`.pipe(Effect.map((rows) => rows.length), Effect.orDie)

  return HookDeliveryRepo.of({ page, replay, recover })
}))
