/** The outbox in SQL: an event row written with the caller's transaction (the ambient one). */
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { type EventKind, newEventId, Outbox, type OutboxEvent } from "@chamber/core"
import type { Int8 } from "./rows.ts"

interface EventRow {
  readonly event_id: string
  readonly tenant_id: Int8
  readonly type: EventKind
  readonly payload: unknown
  readonly created_at: Date
}

const toEvent = (r: EventRow): OutboxEvent => ({
  id: r.event_id,
  tenant_id: Number(r.tenant_id),
  type: r.type,
  created_at: r.created_at.toISOString(),
  data: r.payload
})

export const OutboxSql = Layer.effect(Outbox, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return Outbox.of({
    append: (tenantId, type, data) =>
      sql<EventRow>`INSERT INTO outbox_events (event_id, tenant_id, type, payload)
          VALUES (${newEventId()}, ${tenantId}, ${type}, ${JSON.stringify(data)}::jsonb) RETURNING *`.pipe(
        Effect.map((rows) => toEvent(rows[0]!)),
        Effect.orDie
      ),
    list: (tenantId, options) =>
      (options?.type === undefined
        ? sql<EventRow>`SELECT * FROM outbox_events WHERE tenant_id = ${tenantId} ORDER BY id`
        : sql<EventRow>`SELECT * FROM outbox_events WHERE tenant_id = ${tenantId} AND type = ${options.type} ORDER BY id`).pipe(
        Effect.map((rows) => rows.map(toEvent)),
        Effect.orDie
      )
  })
}))
