/**
 * Migration 0022 (feed positions of each chamber's own, docs/architecture.md "The change feed")
 * on every storage runtime: events committed before it keep their positions, drawn from the
 * sequence every chamber shared, so a cursor given then still reads from the same place; from
 * then on a chamber's next position is one past its own highest, so another chamber's writes
 * never move it, and the feed still follows commit order.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Base64Url } from "effect/encoding"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import { Changes } from "@chamber/core"
import { DatabaseLive, migrate } from "../src/index.ts"
import { ChangeLogSql } from "../src/repos/ChangeLogSql.ts"
import { migrateBefore, onDatabase, runtimes } from "./harness.ts"

const feedOn = (config: Parameters<typeof DatabaseLive>[0]) =>
  Changes.layer.pipe(Layer.provideMerge(ChangeLogSql), Layer.provideMerge(DatabaseLive(config, { migrateOnStart: false })))

for (const rt of runtimes()) {
  describe(`chamber feed positions' migration on ${rt.name}`, () => {
    layer(onDatabase(rt, feedOn), { timeout: 120_000 })((it) => {
      it.effect("a cursor given before it reads on from the same place; after it, another chamber's writes never move a chamber's positions", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const changes = yield* Changes
          yield* migrateBefore(22)
          const tenants = yield* sql<{ readonly id: string }>`
            INSERT INTO tenants (public_id, name) VALUES ('chm_fa', 'A'), ('chm_fb', 'B') RETURNING id::text`
          const [a, b] = tenants.map((t) => Number(t.id)) as [number, number]
          let n = 0
          // One event per transaction: each is numbered as it commits.
          const write = (tenant: number) =>
            sql`INSERT INTO outbox_events (event_id, tenant_id, type, payload)
                VALUES (${`evt_feed${++n}`}, ${tenant}, 'member.created', ${JSON.stringify({ id: n, attributes: {} })}::jsonb)`.pipe(
              sql.withTransaction,
              Effect.as(`evt_feed${n}`)
            )
          const positions = (tenant: number) =>
            sql<{ readonly position: string }>`SELECT position::text FROM outbox_events WHERE tenant_id = ${tenant} ORDER BY position`.pipe(
              Effect.map((rows) => rows.map((r) => Number(r.position)))
            )
          const ids = (page: { readonly data: ReadonlyArray<{ readonly id: string }> }) => page.data.map((e) => e.id)

          // Before: positions shared by both chambers.
          const a1 = yield* write(a)
          yield* write(b)
          yield* write(b)
          const a2 = yield* write(a)
          yield* write(b)
          const [pa, pb] = [yield* positions(a), yield* positions(b)]
          // One count for both: A's second event is past B's first two.
          assert.deepStrictEqual([pa.length, pb.length, pa[1]! - pa[0]!, pb.every((p) => !pa.includes(p))], [2, 3, 3, true])
          // A cursor given then, just past A's first event.
          const old = Base64Url.encode(`v1.${pa[0]}`)

          yield* migrate
          const a3 = yield* write(a)
          const b4 = yield* write(b)
          // Each chamber's next position is one past its own highest, whatever the other wrote.
          assert.deepStrictEqual([yield* positions(a), yield* positions(b)], [[...pa, pa[1]! + 1], [...pb, pb[2]! + 1]])

          const read = yield* changes.read(a, { after: old })
          assert.deepStrictEqual(ids(read), [a2, a3])
          assert.strictEqual(read.meta.next_cursor, Base64Url.encode(`v2.${pa[1]! + 1}`))
          assert.deepStrictEqual(ids(yield* changes.read(b, {})).at(-1), b4)

          // A's cursor after B's writes: as if B had written nothing.
          const head = (yield* changes.read(a, { after: "head" })).meta.next_cursor
          for (let i = 0; i < 3; i++) yield* write(b)
          assert.strictEqual((yield* changes.read(a, { after: "head" })).meta.next_cursor, head)
          const a4 = yield* write(a)
          const next = yield* changes.read(a, { after: head })
          assert.deepStrictEqual([ids(next), next.meta.next_cursor], [[a4], Base64Url.encode(`v2.${pa[1]! + 2}`)])
          // The v1 cursor still reads every event of A after it, in commit order.
          assert.deepStrictEqual(ids(yield* changes.read(a, { after: old })), [a2, a3, a4])
        }).pipe(Effect.orDie))
    })
  })
}
