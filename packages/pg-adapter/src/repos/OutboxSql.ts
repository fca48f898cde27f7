/**
 * The outbox in SQL: an event row, and its deliveries to the subscriptions that want it, written
 * with the caller's transaction (the ambient one).
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
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
    // The event and one delivery per active subscription of its tenant listing its kind, at this
    // moment and in the caller's transaction (ruling 19): one statement.
    append: (tenantId, type, data) =>
      sql<EventRow>`
        WITH e AS (
          INSERT INTO outbox_events (event_id, tenant_id, type, payload)
          VALUES (${newEventId()}, ${tenantId}, ${type}, ${JSON.stringify(data)}::jsonb) RETURNING *
        ), d AS (
          INSERT INTO webhook_deliveries (tenant_id, event_id, hook_id)
          SELECT e.tenant_id, e.id, s.id FROM e
          JOIN webhook_subscriptions s ON s.tenant_id = e.tenant_id AND s.active AND s.events @> jsonb_build_array(e.type)
          RETURNING 1
        )
        -- Relays listening are told on commit (webhook-relay Relay.ts); without a delivery, nothing to tell.
        SELECT e.*, (SELECT pg_notify('chamber_deliveries', '') FROM d LIMIT 1) IS NULL AS quiet FROM e`.pipe(
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
