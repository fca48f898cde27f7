/**
 * The change log in SQL (migration 0013): `outbox_events` read by `(tenant_id, position)`, and its
 * pruning, which records the highest position pruned per chamber in `outbox_pruned`.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import { ChangeLog, type EventKind, EventKinds } from "@chamber/core"
import { andShownRow, feedFence, ImportSlices } from "./HeldRows.ts"
import { isoColumn } from "./IsoColumn.ts"

/** `payload` as text: the feed writes it into its answer without parsing it. */
interface FeedRow {
  readonly at: string
  readonly event_id: string
  readonly type: EventKind
  readonly created_at: string
  readonly payload: string
}

export const ChangeLogSql = Layer.effect(ChangeLog, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const sliced = yield* ImportSlices

  const prunedThrough = (tenantId: number) =>
    sql<{ readonly through: string }>`SELECT through::text FROM outbox_pruned WHERE tenant_id = ${tenantId}`.pipe(
      Effect.map((rows) => BigInt(rows[0]?.through ?? 0)),
      Effect.orDie
    )

  return ChangeLog.of({
    // Events not yet committed have no position (they are numbered as they commit).
    after: (tenantId, after, types, limit) =>
      (types.length === EventKinds.length
        ? sql<FeedRow>`
          SELECT position::text AS at, event_id, type, ${sql.literal(isoColumn("created_at"))} AS created_at, payload::text AS payload
          FROM outbox_events WHERE tenant_id = ${tenantId} AND position > ${after.toString()}::bigint${feedFence(sql, sliced, tenantId)}
          ORDER BY position LIMIT ${limit}`
        : sql<FeedRow>`
          SELECT position::text AS at, event_id, type, ${sql.literal(isoColumn("created_at"))} AS created_at, payload::text AS payload
          FROM outbox_events WHERE tenant_id = ${tenantId} AND position > ${after.toString()}::bigint AND type IN ${sql.in(types)}${feedFence(sql, sliced, tenantId)}
          ORDER BY position LIMIT ${limit}`).pipe(
          Effect.map((rows) => rows.map((r) => ({ position: BigInt(r.at), id: r.event_id, type: r.type, created_at: r.created_at, dataJson: r.payload }))),
          Effect.orDie
        ),
    head: (tenantId) =>
      sql<{ readonly head: string }>`
        SELECT greatest(
          (SELECT max(position) FROM outbox_events WHERE tenant_id = ${tenantId}${feedFence(sql, sliced, tenantId)}),
          (SELECT through FROM outbox_pruned WHERE tenant_id = ${tenantId}),
          0)::text AS head`.pipe(Effect.map((rows) => BigInt(rows[0]!.head)), Effect.orDie),
    prunedThrough,
    // Settled deliveries go with their event (their attempts with them); a pending one keeps it.
    // The highest position deleted per chamber is recorded in the same statement.
    prune: (before, batch) =>
      sql<{ readonly n: string }>`
        WITH doomed AS (
          SELECT e.id FROM outbox_events e
          WHERE e.created_at < ${before} AND e.position IS NOT NULL${sql.literal(andShownRow(sliced, "e"))}
            AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id AND d.status = 'pending')
          ORDER BY e.id LIMIT ${batch}
          FOR UPDATE SKIP LOCKED
        ), settled AS (
          DELETE FROM webhook_deliveries d USING doomed WHERE d.event_id = doomed.id RETURNING d.id
        ), gone AS (
          DELETE FROM outbox_events e USING doomed WHERE e.id = doomed.id
          RETURNING e.tenant_id, e.position
        ), marked AS (
          INSERT INTO outbox_pruned AS p (tenant_id, through)
          SELECT tenant_id, max(position) FROM gone GROUP BY tenant_id
          ON CONFLICT (tenant_id) DO UPDATE SET through = greatest(p.through, EXCLUDED.through)
          RETURNING 1
        )
        SELECT (SELECT count(*) FROM gone)::text AS n, (SELECT count(*) FROM marked) AS m`.pipe(
        Effect.map((rows) => Number(rows[0]!.n)),
        Effect.orDie
      )
  })
}))
