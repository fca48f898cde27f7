/**
 * The embedded database's one door (PgliteWire): many connections, one PGlite session. Two
 * transactions from different connections never interleave, a rollback undoes only its own
 * writes, and a connection that vanishes inside a transaction leaves nothing behind. A request
 * that makes PGlite throw ends only its own connection (its transaction rolled back); one that
 * stops PGlite fails later requests instead of hanging the process. A request waits for the
 * database a bounded time while another connection holds it, then is refused (55P03).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import * as SqlError from "effect/sql/SqlError"
import { PgClient } from "@effect/sql-pg"
import { once } from "node:events"
import { mkdtempSync, rmSync } from "node:fs"
import * as net from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Duplex } from "node:stream"
import { PgliteWire } from "../src/embedded/PgliteWire.ts"

const client = (connect: () => Duplex) =>
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

const openWire = Effect.acquireRelease(Effect.promise(() => PgliteWire.open(undefined)), (w) => Effect.promise(() => w.close()))

const build = (connect: () => Duplex) =>
  Layer.build(client(connect)).pipe(Effect.map((context) => Context.get(context, SqlClient.SqlClient)))

/** The process's unhandled rejections while the test's scope is open. */
const unhandledRejections = Effect.acquireRelease(
  Effect.sync(() => {
    const seen: Array<unknown> = []
    const record = (reason: unknown) => seen.push(reason)
    process.on("unhandledRejection", record)
    return { seen, record }
  }),
  ({ record }) => Effect.sync(() => process.off("unhandledRejection", record))
).pipe(Effect.map(({ seen }) => seen))

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

  // Live clock in the next two: the clients' pools run timers when a connection ends.
  it.live("a request that makes PGlite throw ends only its own connection and rolls back its transaction", () =>
    Effect.gen(function*() {
      const rejections = yield* unhandledRejections
      const wire = yield* openWire
      // PGlite throws, deterministically, on any message carrying this marker.
      const execute = wire.db.execProtocolRawStream.bind(wire.db)
      wire.db.execProtocolRawStream = (message, options) =>
        Buffer.from(message).includes("explode")
          ? Promise.reject(new Error("simulated PGlite failure"))
          : execute(message, options)
      // A's first connection, and what the wire sent on it (A's pool reconnects after it ends).
      let streamA: Duplex | undefined
      const receivedByA: Array<Buffer> = []
      const a = yield* build(() => {
        const stream = wire.connect()
        if (streamA === undefined) {
          streamA = stream
          stream.on("data", (chunk: Buffer) => receivedByA.push(chunk))
        }
        return stream
      })
      const b = yield* build(() => wire.connect())
      yield* b`CREATE TABLE t (v text)`
      const inserted = yield* Deferred.make<void>()
      const txA = yield* a.withTransaction(Effect.gen(function*() {
        yield* a`INSERT INTO t VALUES ('uncommitted')`
        yield* Deferred.succeed(inserted, undefined)
        yield* a`SELECT 'explode'`
      })).pipe(Effect.exit, Effect.forkChild)
      yield* Deferred.await(inserted)
      // B waits behind A's transaction, then goes on without A's write.
      const readB = yield* count(b).pipe(Effect.forkChild)
      assert.isTrue(Exit.isFailure(yield* Fiber.join(txA)))
      assert.strictEqual(yield* Fiber.join(readB), 0)
      // A's connection got a FATAL ErrorResponse with SQLSTATE XX000 and was closed.
      assert.isTrue(Buffer.concat(receivedByA).includes("CXX000\0Membedded database: simulated PGlite failure"))
      if (!streamA!.closed) yield* Effect.promise(() => once(streamA!, "close"))
      // Connections opened afterwards work; the session is idle, outside any transaction.
      const c = yield* build(() => wire.connect())
      yield* c`INSERT INTO t VALUES ('after')`
      assert.strictEqual(yield* count(c), 1)
      assert.isFalse(wire.db.isInTransaction())
      assert.deepStrictEqual(rejections, [])
    }))

  it.live("a statement that stops PGlite fails every later request instead of hanging the process", () =>
    Effect.gen(function*() {
      const rejections = yield* unhandledRejections
      const wire = yield* openWire
      const a = yield* build(() => wire.connect())
      const b = yield* build(() => wire.connect())
      yield* a`CREATE TABLE t (v text)`
      yield* b`SELECT 1` // B is connected before PGlite stops
      // PGlite cannot take COPY data over the wire: its backend exits (a FATAL error).
      assert.isTrue(Exit.isFailure(yield* Effect.exit(a`COPY t FROM STDIN`)))
      // B's next request would make PGlite spin forever, freezing this process (a regression
      // hangs here rather than fails); the wire ends B's connection instead.
      assert.isTrue(Exit.isFailure(yield* Effect.exit(b`SELECT 1`)))
      const c = yield* build(() => wire.connect())
      assert.isTrue(Exit.isFailure(yield* Effect.exit(c`SELECT 1`)))
      assert.deepStrictEqual(rejections, [])
    }))

  it.live("a request waits at most the wait limit while another connection holds PGlite; refused then, as is every other until it lets go", () =>
    Effect.gen(function*() {
      const wire = yield* Effect.acquireRelease(Effect.promise(() => PgliteWire.open(undefined, { waitLimitMs: 1_500 })), (w) => Effect.promise(() => w.close()))
      const a = yield* build(() => wire.connect())
      // B prepares its statements, as the product's clients do: a refusal leaves them usable.
      const b = yield* Layer.build(PgClient.layer({ stream: () => wire.connect(), username: "postgres", database: "postgres", maxConnections: 1 })).pipe(
        Effect.map((context) => Context.get(context, SqlClient.SqlClient))
      )
      yield* a`CREATE TABLE t (v text)`
      assert.strictEqual(yield* count(b), 0)
      const holding = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const txA = yield* a.withTransaction(Effect.gen(function*() {
        yield* a`INSERT INTO t VALUES ('held')`
        yield* Deferred.succeed(holding, undefined)
        yield* Deferred.await(release)
        yield* a`INSERT INTO t VALUES ('still held')`
      })).pipe(Effect.forkChild)
      yield* Deferred.await(holding)
      const refusedAfter = (statement: Effect.Effect<unknown, SqlError.SqlError>) =>
        Effect.gen(function*() {
          const started = performance.now()
          // A statement still waiting after 5 s fails the test; A lets go first, so that everything can end.
          const error = yield* statement.pipe(
            Effect.flip,
            Effect.timeoutOrElse({
              duration: "5 seconds",
              orElse: () => Deferred.succeed(release, undefined).pipe(Effect.andThen(Effect.die(new Error("still waiting after 5 s"))))
            })
          )
          assert.strictEqual(error.reason._tag, "LockTimeoutError", error.message)
          assert.strictEqual((error.reason.cause as { code?: string }).code, "55P03")
          return performance.now() - started
        })
      // B's statement waits its 1.5 s, then is refused without running.
      assert.isAtLeast(yield* refusedAfter(count(b)), 1_400)
      // Until A lets go, every other request is refused at once: B's next one, and a new connection's startup.
      assert.isBelow(yield* refusedAfter(count(b)), 1_000)
      const c = yield* build(() => wire.connect())
      assert.isBelow(yield* refusedAfter(c`SELECT 1`), 1_000)
      // A holds on and commits; then B's prepared statement and C answer, and see both rows.
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(txA)
      assert.strictEqual(yield* count(b), 2)
      assert.strictEqual(yield* count(c), 2)
    }))
})
