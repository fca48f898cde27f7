/**
 * Migrations 0016 to 0018 (ordered delivery, docs/webhooks.md "Order") on every storage runtime:
 * the deliveries already there are keyed by the resource their event is about, those waiting
 * behind an earlier pending one of their subscription and resource are held, and settling a
 * delivery lets the next one of its subscription and resource go; deliveries queued again without
 * a mark, free beside another of their resource, are marked as queued again, and those with a
 * later one of their resource waiting as followed.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"
import { DatabaseLive, migrate } from "../src/index.ts"
import { migrateBefore, onDatabase, runtimes } from "./harness.ts"

for (const rt of runtimes()) {
  describe(`ordered deliveries' migration on ${rt.name}`, () => {
    layer(onDatabase(rt, (config) => DatabaseLive(config, { migrateOnStart: false })), { timeout: 120_000 })((it) => {
      it.effect("keys the deliveries already there by resource, holds those behind an earlier pending one, and settling lets the next go", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          yield* migrateBefore(16)
          const [tenant] = yield* sql<{ readonly id: string }>`INSERT INTO tenants (public_id, name) VALUES ('chm_o', 'O') RETURNING id::text`
          const hooks = yield* sql<{ readonly id: string }>`
            INSERT INTO webhook_subscriptions (tenant_id, url, events, secret)
            VALUES (${tenant!.id}, 'https://a.example/h', '[]', 's'), (${tenant!.id}, 'https://b.example/h', '[]', 's') RETURNING id::text`
          const [a, b] = hooks.map((h) => h.id)
          // In commit order: member 7 created, then patched; invoice 7 issued; registration 3; member 8 (already delivered).
          const events: ReadonlyArray<readonly [string, number]> = [
            ["member.created", 7], ["member.updated", 7], ["invoice.issued", 7], ["event.registration.created", 3], ["member.created", 8], ["member.updated", 7]
          ]
          for (const [i, [type, id]] of events.entries()) {
            const [event] = yield* sql<{ readonly id: string }>`
              INSERT INTO outbox_events (event_id, tenant_id, type, payload)
              VALUES (${`evt_order${i}`}, ${tenant!.id}, ${type}, ${JSON.stringify({ id, attributes: {} })}::jsonb) RETURNING id::text`
            yield* sql`INSERT INTO webhook_deliveries (tenant_id, event_id, hook_id, status) VALUES
              (${tenant!.id}, ${event!.id}, ${a}, ${i === 4 ? "succeeded" : "pending"}), (${tenant!.id}, ${event!.id}, ${b}, 'pending')`
          }
          yield* migrate
          const rows = () =>
            sql<{ readonly hook: string; readonly resource: string; readonly held: boolean }>`
              SELECT hook_id::text AS hook, resource, held FROM webhook_deliveries ORDER BY hook_id, id`
          const expected = (hook: string, helds: ReadonlyArray<boolean>) =>
            ["members/7", "members/7", "invoices/7", "registrations/3", "members/8", "members/7"].map((resource, i) => ({ hook, resource, held: helds[i]! }))
          assert.deepStrictEqual(yield* rows(), [
            ...expected(a!, [false, true, false, false, false, true]),
            ...expected(b!, [false, true, false, false, false, true])
          ])
          // Subscription a's member.created settles: its first member.updated goes, the second still waits.
          yield* sql`UPDATE webhook_deliveries SET status = 'succeeded' WHERE hook_id = ${a} AND resource = 'members/7' AND held = false`
          assert.deepStrictEqual(yield* rows(), [
            ...expected(a!, [false, false, false, false, false, true]),
            ...expected(b!, [false, true, false, false, false, true])
          ])
        }).pipe(Effect.orDie))

      it.effect("marks the deliveries queued again before 0017 that wait free beside another of their resource, without moving their updated_at, and those followed by another", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          yield* sql`DROP SCHEMA public CASCADE`
          yield* sql`CREATE SCHEMA public`
          yield* migrateBefore(17)
          const [tenant] = yield* sql<{ readonly id: string }>`INSERT INTO tenants (public_id, name) VALUES ('chm_q', 'Q') RETURNING id::text`
          const [hook] = yield* sql<{ readonly id: string }>`
            INSERT INTO webhook_subscriptions (tenant_id, url, events, secret) VALUES (${tenant!.id}, 'https://q.example/h', '[]', 's') RETURNING id::text`
          // members/1: the created replayed by the admin (no mark) while the update waits free;
          // members/2: one free and one held behind it; members/3: replayed over the API (marked).
          const deliveries: ReadonlyArray<readonly [string, boolean, string | null]> = [
            ["members/1", false, null], ["members/1", false, null], ["members/2", false, null], ["members/2", true, null],
            ["members/3", false, "2026-01-02T00:00:00Z"]
          ]
          for (const [i, [resource, held, queuedAt]] of deliveries.entries()) {
            const [event] = yield* sql<{ readonly id: string }>`
              INSERT INTO outbox_events (event_id, tenant_id, type, payload)
              VALUES (${`evt_queued${i}`}, ${tenant!.id}, 'member.updated', '{}'::jsonb) RETURNING id::text`
            yield* sql`INSERT INTO webhook_deliveries (tenant_id, event_id, hook_id, resource, held, queued_at, created_at)
              VALUES (${tenant!.id}, ${event!.id}, ${hook!.id}, ${resource}, ${held}, ${queuedAt}, '2026-01-01T00:00:00Z')`
          }
          yield* migrate
          const rows = yield* sql<{ readonly resource: string; readonly queued: string | null; readonly followed: boolean }>`
            SELECT resource, to_char(queued_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS queued, followed FROM webhook_deliveries ORDER BY id`
          // Marked too (0018): each delivery with a later one of its resource waiting.
          assert.deepStrictEqual(rows.map((r) => [r.resource, r.queued, r.followed]), [
            ["members/1", "2026-01-01", true], ["members/1", "2026-01-01", false], ["members/2", null, true], ["members/2", null, false],
            ["members/3", "2026-01-02", false]
          ])
        }).pipe(Effect.orDie))
    })
  })
}
