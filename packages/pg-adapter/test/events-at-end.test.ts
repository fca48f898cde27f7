/**
 * Events written at the end of their transaction (Outbox `appendingAtEnd`, migration 0027: an
 * import's) on every storage runtime: written after everything else the transaction writes, in the
 * order appended, each with its place in the chamber's feed and the deliveries `append` would
 * queue; what a savepoint rolls back stays rolled back. On PostgreSQL, a write of the same chamber
 * committing while such a transaction is open neither waits for it nor lands behind it.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as SqlClient from "effect/sql/SqlClient"
import { Hooks, Members, Outbox, Tenants, Transactor } from "@chamber/core"
import { StorageLive } from "../src/index.ts"
import { onDatabase, postgresOnly, runtimes } from "./harness.ts"

const chamber = Effect.gen(function*() {
  const tenant = yield* (yield* Tenants).create({ name: `At end ${Math.random()}` })
  yield* (yield* Hooks).create(tenant.id, { url: "https://hooks.example.com/in", events: ["member.created", "member.updated"] })
  yield* (yield* Members).create(tenant.id, { name: "Before", status: "active" })
  return tenant.id
}).pipe(Effect.orDie)

/** The chamber's feed in position order: kind, the resource's name, position; and its deliveries in the order made. */
const feedOf = (tenantId: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const events = yield* sql<{ readonly type: string; readonly name: string; readonly position: string | null }>`
      SELECT type, payload->'attributes'->>'name' AS name, position::text FROM outbox_events WHERE tenant_id = ${tenantId} ORDER BY position, id`
    const deliveries = yield* sql<{ readonly name: string; readonly held: boolean; readonly followed: boolean }>`
      SELECT e.payload->'attributes'->>'name' AS name, d.held, d.followed FROM webhook_deliveries d JOIN outbox_events e ON e.id = d.event_id
      WHERE d.tenant_id = ${tenantId} ORDER BY d.id`
    return {
      events: events.map((e) => `${e.position} ${e.type} ${e.name}`),
      deliveries: deliveries.map((d) => `${d.name}${d.held ? " held" : ""}${d.followed ? " followed" : ""}`)
    }
  })

const member = (id: number, name: string) => ({ id: `mem_${id}`, attributes: { name } })

for (const rt of runtimes()) {
  describe(`events written at the end of their transaction on ${rt.name}`, () => {
    layer(onDatabase(rt, (config) => StorageLive(config)), { timeout: 120_000, excludeTestServices: true })((it) => {
      it.effect("after the rest, in the order appended, each with its position and deliveries; a savepoint rolled back takes its events", () =>
        Effect.gen(function*() {
          const [outbox, tx, sql] = [yield* Outbox, yield* Transactor, yield* SqlClient.SqlClient]
          const t = yield* chamber
          const seenInside = yield* tx.withTransaction(outbox.appendingAtEnd(t, Effect.gen(function*() {
            yield* outbox.appendAll(t, [{ type: "member.created", data: member(1, "Ann") }, { type: "member.updated", data: member(1, "Ann 2") }])
            const refused = yield* Effect.exit(tx.withTransaction(Effect.andThen(outbox.append(t, "member.created", member(2, "Refused")), Effect.fail("refused"))))
            assert.isTrue(Exit.isFailure(refused))
            const appended = yield* outbox.append(t, "member.updated", member(1, "Ann 3"))
            assert.deepStrictEqual([appended.type, appended.data], ["member.updated", member(1, "Ann 3")])
            yield* outbox.append(t, "member.created", member(3, "Bo"))
            // Nothing of them in the feed's table yet.
            return (yield* sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM outbox_events WHERE tenant_id = ${t}`)[0]!.n
          })))
          assert.strictEqual(seenInside, 1)
          const { deliveries, events } = yield* feedOf(t)
          assert.deepStrictEqual(events, [
            "1 member.created Before",
            "2 member.created Ann",
            "3 member.updated Ann 2",
            "4 member.updated Ann 3",
            "5 member.created Bo"
          ])
          // Ann's later deliveries wait behind her first, as they would behind appends one by one.
          assert.deepStrictEqual(deliveries, ["Before", "Ann followed", "Ann 2 held", "Ann 3 held", "Bo"])
          // Event ids were drawn as they were appended: in the same order.
          const byId = yield* sql<{ readonly position: string }>`SELECT position::text FROM outbox_events WHERE tenant_id = ${t} ORDER BY id`
          assert.deepStrictEqual(byId.map((r) => Number(r.position)), [1, 2, 3, 4, 5])

          // A failed transaction leaves nothing, and the next one goes on from the same place.
          const failed = yield* Effect.exit(tx.withTransaction(outbox.appendingAtEnd(t, Effect.andThen(outbox.append(t, "member.created", member(4, "Gone")), Effect.fail("no")))))
          assert.isTrue(Exit.isFailure(failed))
          yield* (yield* Members).create(t, { name: "After", status: "active" }).pipe(Effect.orDie)
          assert.deepStrictEqual((yield* feedOf(t)).events.slice(5), ["6 member.created After"])
        }))
    })
  })
}

for (const rt of postgresOnly("events written at the end of their transaction, with a write of the same chamber beside it")) {
  describe(`events written at the end of their transaction on ${rt.name}, beside another write`, () => {
    layer(onDatabase(rt, (config) => StorageLive(config)), { timeout: 120_000, excludeTestServices: true })((it) => {
      it.effect("a write of the chamber commits meanwhile without waiting, and comes first in the feed", () =>
        Effect.gen(function*() {
          const [outbox, tx] = [yield* Outbox, yield* Transactor]
          const t = yield* chamber
          const go = yield* Deferred.make<void>()
          const appended = yield* Deferred.make<void>()
          const importing = yield* Effect.forkChild(tx.withTransaction(outbox.appendingAtEnd(t, Effect.gen(function*() {
            yield* outbox.appendAll(t, [{ type: "member.created", data: member(1, "Ann") }, { type: "member.created", data: member(2, "Bo") }])
            yield* Deferred.succeed(appended, undefined)
            yield* Deferred.await(go)
          }))))
          yield* Deferred.await(appended)
          yield* (yield* Members).create(t, { name: "Meanwhile", status: "active" }).pipe(
            Effect.orDie,
            Effect.timeoutOrElse({ duration: "10 seconds", orElse: () => Effect.die(new Error("the write waited for the open transaction")) })
          )
          yield* Deferred.succeed(go, undefined)
          yield* Fiber.join(importing)
          assert.deepStrictEqual((yield* feedOf(t)).events, [
            "1 member.created Before",
            "2 member.created Meanwhile",
            "3 member.created Ann",
            "4 member.created Bo"
          ])
        }))
    })
  })
}
