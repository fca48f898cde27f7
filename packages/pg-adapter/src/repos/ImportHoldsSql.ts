/**
 * Imports' holds in SQL (migration 0025; core `ImportHolds`; docs/architecture.md "On the embedded
 * database: slices under a hold"). A slice sets `chamber.hold` for its transaction alone, so every
 * row it writes, by whatever statement, takes the hold as its `held_by` (the column's default), and
 * its reads see the hold's rows (HeldRows.ts). Publishing deletes the hold: one row, whatever the
 * import's size. Discarding empties the hold's rows table by table in the order a chamber's removal
 * uses (the catalogue's foreign keys, TenantRemovalSql.ts), a batch a transaction as removal's
 * (`deletionBatch`).
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import { ImportHolds } from "@chamber/core"
import { alive } from "../embedded/Cluster.ts"
import { ImportSlices } from "./HeldRows.ts"
import type { Int8 } from "./rows.ts"
import { deleteSome, deletionBatch, foreignKeys, removalOrder, tablesWith, TRIGGER_ORDER } from "./TenantRemovalSql.ts"

/** Rows a discard removes a transaction. */
const DISCARD_BATCH = 500

export const ImportHoldsSql = Layer.effect(ImportHolds, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const sliced = yield* ImportSlices

  /** The tables an import writes, each before those it references. */
  const heldTables = Effect.gen(function*() {
    const holding = yield* tablesWith(sql, "held_by")
    const references = yield* foreignKeys(sql)
    return removalOrder(holding, [...references.map((r) => [r.referencing, r.referenced] as const), ...TRIGGER_ORDER])
  }).pipe(Effect.orDie)

  const discard = Effect.fn("ImportHolds.discard")(function*(hold: number) {
    // A booking type is found by name whether held or not (the API makes one by name, and the
    // name is unique): one a booking outside the import now uses stays, as that booking's.
    yield* sql`
      UPDATE booking_types t SET held_by = NULL WHERE t.held_by = ${hold}
        AND EXISTS (SELECT 1 FROM bookings b WHERE b.booking_type_id = t.id AND b.held_by IS DISTINCT FROM ${hold})`
    // Deliveries go with their events (HeldRows.ts `shownDelivery`), before them.
    while (true) {
      const gone = yield* deletionBatch(sql, sql<{ readonly n: Int8 }>`
        WITH gone AS (
          DELETE FROM webhook_deliveries WHERE ctid = ANY(ARRAY(
            SELECT d.ctid FROM outbox_events e JOIN webhook_deliveries d ON d.event_id = e.id WHERE e.held_by = ${hold} LIMIT ${DISCARD_BATCH}))
          RETURNING 1
        )
        SELECT count(*) AS n FROM gone`)
      if (gone < DISCARD_BATCH) break
    }
    for (const table of yield* heldTables) {
      while (true) {
        const gone = yield* deleteSome(sql, table, "held_by", hold, DISCARD_BATCH)
        if (gone < DISCARD_BATCH) break
      }
    }
    // The invoice numbers the import took are given back, unless the API has issued one since.
    yield* sql`
      UPDATE invoice_sequences s SET last_number = coalesce(h.invoice_number, 0)
      FROM import_holds h
      WHERE h.id = ${hold} AND s.tenant_id = h.tenant_id
        AND NOT EXISTS (SELECT 1 FROM invoices i WHERE i.tenant_id = h.tenant_id AND i.issued_at >= h.created_at)`
    yield* sql`DELETE FROM import_holds WHERE id = ${hold}`
  }, Effect.orDie)

  return ImportHolds.of({
    sliced,
    // Every event committed from now on, the import's or another writer's, is above the fence.
    open: Effect.fn("ImportHolds.open")(function*(tenantId: number) {
      const [row] = yield* sql<{ readonly id: Int8 }>`
        INSERT INTO import_holds (tenant_id, fence, invoice_number, pid) VALUES (${tenantId}, chamber_feed_last(${tenantId}),
          (SELECT last_number FROM invoice_sequences WHERE tenant_id = ${tenantId}), ${process.pid})
        RETURNING id`
      return Number(row!.id)
    }, Effect.orDie),
    slice: (hold, self) =>
      sql.withTransaction(
        sql`WITH touched AS (UPDATE import_holds SET touched_at = now() WHERE id = ${hold} RETURNING 1)
            SELECT set_config('chamber.hold', ${String(hold)}, true)`.pipe(
          Effect.orDie,
          Effect.andThen(self)
        )
      ).pipe(Effect.catchTag("SqlError", Effect.die)),
    // The members and contacts holding a value of a custom field the import defined change as it shows (migration 0025).
    publish: Effect.fn("ImportHolds.publish")(function*(hold: number) {
      yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql`DELETE FROM import_holds WHERE id = ${hold}`
        yield* sql`SELECT custom_field_shown_values(d) FROM custom_field_definitions d WHERE d.held_by = ${hold} AND d.api_visible`
      }))
    }, Effect.orDie),
    discard,
    // Abandoned: its process is gone, or it has written nothing for `idle` (a process that hangs).
    sweep: Effect.fn("ImportHolds.sweep")(function*(idle: Duration.Input) {
      const holds = yield* sql<{ readonly id: Int8; readonly pid: number; readonly idle: boolean }>`
        SELECT id, pid, touched_at < now() - make_interval(secs => ${Duration.toSeconds(Duration.fromInputUnsafe(idle))}) AS idle
        FROM import_holds ORDER BY id`
      const abandoned = holds.filter((h) => h.idle || (h.pid !== process.pid && !alive(h.pid)))
      for (const { id } of abandoned) yield* discard(Number(id))
      return abandoned.length
    }, Effect.orDie)
  })
}))
