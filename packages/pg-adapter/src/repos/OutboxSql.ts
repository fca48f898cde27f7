/**
 * The outbox in SQL: an event row, and its deliveries to the subscriptions that want it, written
 * with the caller's transaction (the ambient one).
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import type * as Statement from "effect/sql/Statement"
import { type AppendedEvent, type EventKind, eventResource, newEventId, Outbox, type OutboxEvent } from "@chamber/core"
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

/** The chamber whose events this fiber's transaction writes at the end of `appendingAtEnd`; none by default. */
const AppendingAtEnd = Context.Reference<number | undefined>("chamber/OutboxSql/AppendingAtEnd", { defaultValue: () => undefined })

export const OutboxSql = Layer.effect(Outbox, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const appendOne = (tenantId: number, type: EventKind, data: unknown) =>
    // The event and one delivery per active subscription of its tenant listing its kind, at this
    // moment and in the caller's transaction (ruling 19): one statement. A delivery is held
    // (ruling 32, migration 0016) when an earlier one of its subscription and resource is pending:
    // the first such is locked FOR KEY SHARE, so that it cannot be settled before this commits (the
    // relay settles FOR UPDATE, then lets the next one go with a snapshot taken after), and marked
    // `followed` unless it is already (migration 0018: settling it then looks for the next). One
    // subscription after another in id order, as the relay locks what it settles: the two never
    // wait for each other in a circle over one event.
    //
    // The event id is commit order for one resource: every write of a resource holds its row's
    // lock from before it appends until it commits (core: Members, Invoices, Payments, Deals
    // update through findForUpdate; a create's row is seen by no one before its commit; contacts
    // and registrations fire once, at creation, one by one or as an import's batch), so a later
    // writer of the resource takes its event id after the earlier one committed, and events
    // appended by one transaction are numbered in the order it appends them.
    //
    // Planned at each run (not prepared), for webhook_deliveries as it is then: a burst grows it
    // within one transaction, faster than autovacuum analyzes it, and a plan kept from its first
    // runs, while the table was small or after an ANALYZE found it empty, read the whole table for
    // each subscription's probe and for the mark (bench/README.md "First write").
      sql<EventRow>`
        WITH e AS (
          INSERT INTO outbox_events (event_id, tenant_id, type, payload)
          VALUES (${newEventId()}, ${tenantId}, ${type}, ${JSON.stringify(data)}::jsonb) RETURNING *
        ), hooks AS MATERIALIZED (
          SELECT s.id FROM e
          JOIN webhook_subscriptions s ON s.tenant_id = e.tenant_id AND s.active AND s.events @> jsonb_build_array(e.type)
          ORDER BY s.id
        ), ahead AS MATERIALIZED (
          SELECT h.id AS hook_id, p.id, p.followed FROM hooks h CROSS JOIN LATERAL (
            SELECT p.id, p.followed FROM webhook_deliveries p
            WHERE p.hook_id = h.id AND p.resource = ${eventResource(type, data)} AND p.status = 'pending'
            ORDER BY p.event_id LIMIT 1 FOR KEY SHARE
          ) p
        ), marked AS (
          UPDATE webhook_deliveries SET followed = true WHERE id = ANY(ARRAY(SELECT id FROM ahead WHERE NOT followed))
        ), d AS (
          INSERT INTO webhook_deliveries (tenant_id, event_id, hook_id, resource, held)
          SELECT e.tenant_id, e.id, h.id, ${eventResource(type, data)}, ahead.hook_id IS NOT NULL
          FROM e CROSS JOIN hooks h LEFT JOIN ahead ON ahead.hook_id = h.id
          RETURNING 1
        )
        -- Relays listening are told on commit (webhook-relay Relay.ts); without a delivery, nothing to tell.
        SELECT e.*, (SELECT pg_notify('chamber_deliveries', '') FROM d LIMIT 1) IS NULL AS quiet FROM e`.unprepared.pipe(
        Effect.map((rows) => toEvent(rows[0]!)),
        Effect.orDie
      )
  /** Rows of `outbox_appending` (appendingAtEnd) from an appendAll input. */
  const stage = (input: string) =>
    sql<Omit<EventRow, "tenant_id">>`
      INSERT INTO pg_temp.outbox_appending (event_id, type, resource, payload)
      SELECT i.value->>'event_id', i.value->>'type', i.value->>'resource', i.value->'payload'
      FROM jsonb_array_elements(${input}::jsonb) WITH ORDINALITY AS i(value, ord) ORDER BY i.ord
      RETURNING event_id, type, payload, created_at`.pipe(Effect.orDie)

  /**
   * As `append` for each event of `input` in order, in one statement: the same event rows (with
   * `numbered`, each given its position, one past the chamber's last in the order of \`ord\`;
   * else numbered by the trigger at commit, in insertion order) and deliveries (event by event,
   * subscriptions in id order). `input` answers (ord, event_id, type, resource, payload), and
   * with `numbered` each event's id too, drawn as it was appended. The
   * probe for a pending delivery to wait behind sees the table as the statement began, so it is
   * made once per subscription and resource, for the first of the events about that resource;
   * the deliveries of the later ones are held, as one `append` after another would hold them,
   * and the first pending delivery of the pair (the one found, else the first one made here) is
   * marked `followed` when any is held behind it.
   */
  const appendStatement = (tenantId: number, input: Statement.Fragment, numbered: boolean) => {
    const drawn = numbered ? sql.literal("id, ") : sql.literal("")
    return sql`
      WITH input AS MATERIALIZED (${input}), base AS MATERIALIZED (
        SELECT ${numbered ? sql`chamber_feed_last(${tenantId})` : sql`NULL::bigint`} AS last
      ), e AS (
        INSERT INTO outbox_events (${drawn}event_id, tenant_id, type, payload, position)
        SELECT ${drawn}event_id, ${tenantId}, type, payload, base.last + ord FROM input, base ORDER BY ord
        RETURNING id, event_id
      ), wanted AS MATERIALIZED (
        SELECT i.event_id, i.resource, s.id AS hook_id,
          row_number() OVER (PARTITION BY s.id, i.resource ORDER BY i.ord) AS nth,
          count(*) OVER (PARTITION BY s.id, i.resource) AS n
        FROM input i JOIN webhook_subscriptions s
          ON s.tenant_id = ${tenantId} AND s.active AND s.events @> jsonb_build_array(i.type)
      ), ahead AS MATERIALIZED (
        SELECT w.hook_id, w.resource, p.id, p.followed
        FROM (SELECT hook_id, resource FROM wanted WHERE nth = 1 ORDER BY hook_id, resource) w CROSS JOIN LATERAL (
          SELECT p.id, p.followed FROM webhook_deliveries p
          WHERE p.hook_id = w.hook_id AND p.resource = w.resource AND p.status = 'pending'
          ORDER BY p.event_id LIMIT 1 FOR KEY SHARE
        ) p
      ), marked AS (
        UPDATE webhook_deliveries SET followed = true WHERE id = ANY(ARRAY(SELECT id FROM ahead WHERE NOT followed))
      ), d AS (
        INSERT INTO webhook_deliveries (tenant_id, event_id, hook_id, resource, held, followed)
        SELECT ${tenantId}, e.id, w.hook_id, w.resource, ahead.hook_id IS NOT NULL OR w.nth > 1, ahead.hook_id IS NULL AND w.nth = 1 AND w.n > 1
        FROM e JOIN wanted w ON w.event_id = e.event_id
        LEFT JOIN ahead ON ahead.hook_id = w.hook_id AND ahead.resource = w.resource
        ORDER BY e.id, w.hook_id
        RETURNING 1
      )
      SELECT (SELECT pg_notify('chamber_deliveries', '') FROM d LIMIT 1) IS NULL AS quiet`.unprepared.pipe(Effect.asVoid, Effect.orDie)
  }

  const appendInput = (events: ReadonlyArray<AppendedEvent>) =>
    JSON.stringify(events.map((e) => ({ event_id: newEventId(), type: e.type, resource: eventResource(e.type, e.data), payload: e.data })))

  return Outbox.of({
    append: (tenantId, type, data) =>
      Effect.flatMap(AppendingAtEnd, (atEnd) =>
        atEnd === tenantId
          ? Effect.map(stage(appendInput([{ type, data }])), (rows) => toEvent({ ...rows[0]!, tenant_id: tenantId }))
          : appendOne(tenantId, type, data)),
    // As `append` for each event in order, in one statement (appendStatement); kept aside inside appendingAtEnd.
    appendAll: (tenantId, events) =>
      events.length === 0 ? Effect.void : Effect.flatMap(AppendingAtEnd, (atEnd) =>
        atEnd === tenantId
          ? stage(appendInput(events)).pipe(Effect.asVoid)
          : appendStatement(tenantId, sql`
            SELECT i.ord, i.value->>'event_id' AS event_id, i.value->>'type' AS type, i.value->>'resource' AS resource, i.value->'payload' AS payload
            FROM jsonb_array_elements(${appendInput(events)}::jsonb) WITH ORDINALITY AS i(value, ord)`, false)),
    // The events kept aside in a table of the transaction's own, which a savepoint rolls back with
    // the rest, each with its event id drawn as it is appended (so ids keep the order of appends,
    // as `append`'s), then written as appendAll writes them, numbered: one past the chamber's last
    // position, in the order appended. `appendAll`'s equivalence to one `append` after another
    // makes the order of the deliveries the same.
    appendingAtEnd: (tenantId, self) =>
      Effect.flatMap(AppendingAtEnd, (atEnd) =>
        atEnd === tenantId ? self : sql`CREATE TEMP TABLE outbox_appending (
            id bigint NOT NULL DEFAULT nextval('outbox_events_id_seq'), event_id text NOT NULL, type text NOT NULL, resource text NOT NULL, payload jsonb NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now()
          ) ON COMMIT DROP`.pipe(
          Effect.orDie,
          Effect.andThen(Effect.provideService(self, AppendingAtEnd, tenantId)),
          Effect.tap(() =>
            sql`SELECT chamber_feed_lock(${tenantId})`.pipe(
              Effect.andThen(appendStatement(tenantId, sql`
                SELECT s.id, row_number() OVER (ORDER BY s.id) AS ord, s.event_id, s.type, s.resource, s.payload FROM pg_temp.outbox_appending s`, true)),
              Effect.andThen(sql`DROP TABLE pg_temp.outbox_appending`),
              Effect.orDie
            )
          )
        )),
    list: (tenantId, options) =>
      (options?.type === undefined
        ? sql<EventRow>`SELECT * FROM outbox_events WHERE tenant_id = ${tenantId} ORDER BY id`
        : sql<EventRow>`SELECT * FROM outbox_events WHERE tenant_id = ${tenantId} AND type = ${options.type} ORDER BY id`).pipe(
        Effect.map((rows) => rows.map(toEvent)),
        Effect.orDie
      )
  })
}))
