/**
 * The embedded database's one door (PgliteWire): many connections, one PGlite session. Two
 * transactions from different connections never interleave, a rollback undoes only its own
 * writes, and a connection that vanishes inside a transaction leaves nothing behind.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Deferred, Effect, Fiber, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { PgClient } from "@effect/sql-pg"
import { mkdtempSync, rmSync } from "node:fs"
import * as net from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { PgliteWire } from "../src/embedded/PgliteWire.ts"

const client = (connect: () => import("node:stream").Duplex) =>
  PgClient.layer({ stream: connect, username: "postgres", database: "postgres", prepare: false, maxConnections: 1 })

/** Runs `f` with two independent clients (two connections) on one wire. */
const withTwoClients = <A, E>(
  wire: PgliteWire,
  f: (a: SqlClient.SqlClient, b: SqlClient.SqlClient) => Effect.Effect<A, E>
) =>
  Effect.gen(function*() {
    const a = Context.get(yield* Layer.build(client(() => wire.connect())), SqlClient.SqlClient)
    const b = Context.get(yield* Layer.build(client(() => wire.connect())), SqlClient.SqlClient)
    return yield* f(a, b)
  }).pipe(Effect.scoped)

const count = (sql: SqlClient.SqlClient) =>
  sql<{ n: number }>`SELECT count(*)::int AS n FROM t`.pipe(Effect.map((rows) => rows[0]!.n))

describe("PgliteWire", () => {
  // Live clock: the test waits real time to show that B is held back.
  it.live("isolates transactions of different connections and rolls back only its own", () =>
    Effect.gen(function*() {
      const wire = yield* Effect.acquireRelease(Effect.promise(() => PgliteWire.open(undefined)), (w) => Effect.promise(() => w.close()))
      yield* withTwoClients(wire, (a, b) =>
        Effect.gen(function*() {
          yield* a`CREATE TABLE t (v text)`
          const inserted = yield* Deferred.make<void>()
          const release = yield* Deferred.make<void>()
          // A: insert inside a transaction, hold it open, then roll back.
          const txA = yield* a.withTransaction(Effect.gen(function*() {
            yield* a`INSERT INTO t VALUES ('from a')`
            yield* Deferred.succeed(inserted, undefined)
            yield* Deferred.await(release)
            return yield* Effect.fail("rollback a" as const)
          })).pipe(Effect.flip, Effect.forkChild)
          yield* Deferred.await(inserted)
          // B: its read waits for A's transaction to end; it never sees A's uncommitted row.
          const readB = yield* count(b).pipe(Effect.forkChild)
          yield* Effect.sleep("100 millis")
          assert.isUndefined(readB.pollUnsafe(), "B ran inside A's transaction")
          yield* Deferred.succeed(release, undefined)
          assert.strictEqual(yield* Fiber.join(txA), "rollback a")
          assert.strictEqual(yield* Fiber.join(readB), 0)
          // B commits its own write; a later rollback by A leaves it in place.
          yield* b.withTransaction(b`INSERT INTO t VALUES ('from b')`)
          yield* a.withTransaction(Effect.gen(function*() {
            yield* a`INSERT INTO t VALUES ('from a again')`
            return yield* Effect.fail("no" as const)
          })).pipe(Effect.flip)
          const rows = yield* a<{ v: string }>`SELECT v FROM t`
          assert.deepStrictEqual(rows.map((r) => r.v), ["from b"])
        }))
    }))

  it.effect("concurrent statements from many connections each get their own results", () =>
    Effect.gen(function*() {
      const wire = yield* Effect.acquireRelease(Effect.promise(() => PgliteWire.open(undefined)), (w) => Effect.promise(() => w.close()))
      const layer = PgClient.layer({ stream: () => wire.connect(), username: "postgres", database: "postgres", prepare: false, maxConnections: 4 })
      const results = yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        return yield* Effect.all(
          Array.from({ length: 40 }, (_, i) => sql<{ x: number }>`SELECT ${i}::int AS x`.pipe(Effect.map((r) => r[0]!.x))),
          { concurrency: "unbounded" }
        )
      }).pipe(Effect.provide(layer))
      assert.deepStrictEqual(results, Array.from({ length: 40 }, (_, i) => i))
    }))

  it.effect("a socket client that disappears inside a transaction leaves nothing behind", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "wire-"))
      const wire = yield* Effect.acquireRelease(
        Effect.promise(async () => {
          const w = await PgliteWire.open(undefined)
          await w.listen(join(dir, ".s.PGSQL.5432"))
          return w
        }),
        (w) => Effect.promise(() => w.close()).pipe(Effect.andThen(Effect.sync(() => rmSync(dir, { recursive: true, force: true }))))
      )
      let socket: net.Socket | undefined
      const viaSocket = PgClient.layer({
        stream: () => (socket = net.createConnection(join(dir, ".s.PGSQL.5432"))),
        username: "postgres",
        database: "postgres",
        prepare: false,
        maxConnections: 1
      })
      const local = client(() => wire.connect())
      yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE t (v text)`
      }).pipe(Effect.provide(local))
      const started = yield* Deferred.make<void>()
      const abandoned = yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`INSERT INTO t VALUES ('abandoned')`
          yield* Deferred.succeed(started, undefined)
          yield* Effect.never
        }))
      }).pipe(Effect.provide(viaSocket), Effect.forkChild)
      yield* Deferred.await(started)
      socket!.destroy()
      yield* Fiber.interrupt(abandoned)
      const n = yield* Effect.gen(function*() {
        return yield* count(yield* SqlClient.SqlClient)
      }).pipe(Effect.provide(local))
      assert.strictEqual(n, 0)
    }))
})
