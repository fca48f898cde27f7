/** The outbox in SQL: an event row written with the caller's transaction (the ambient one). */
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { newEventId, Outbox, type OutboxEvent } from "@chamber/core"
import { isoRequired, num } from "./rows.ts"

const toEvent = (r: any): OutboxEvent => ({
  id: r.event_id,
  tenant_id: num(r.tenant_id),
  type: r.type,
  created_at: isoRequired(r.created_at),
  data: r.payload
})

export const OutboxSql = Layer.effect(Outbox, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return Outbox.of({
    append: (tenantId, type, data) =>
      sql`INSERT INTO outbox_events (event_id, tenant_id, type, payload)
          VALUES (${newEventId()}, ${tenantId}, ${type}, ${JSON.stringify(data)}::jsonb) RETURNING *`.pipe(
        Effect.map((rows) => toEvent(rows[0])),
        Effect.orDie
      ),
    list: (tenantId, options) =>
      (options?.type === undefined
        ? sql`SELECT * FROM outbox_events WHERE tenant_id = ${tenantId} ORDER BY id`
        : sql`SELECT * FROM outbox_events WHERE tenant_id = ${tenantId} AND type = ${options.type} ORDER BY id`).pipe(
        Effect.map((rows) => rows.map(toEvent)),
        Effect.orDie
      )
  })
}))
