/**
 * Statements pipelined on PostgreSQL connections (docs/operations.md "PostgreSQL",
 * DATABASE_PIPELINE): statements in flight share the pool's connections, `pipeline` to a
 * connection, and sharing changes no answer. A failing statement fails alone, a transaction
 * keeps a connection of its own, and a statement whose fiber is cut runs to its end (a cancel
 * would reach its neighbours) while its connection serves the next ones their own rows. PGlite
 * has one session and no pool to share, so this is the server's.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import pg from "pg"
import { DatabaseConfigRef, postgresOnly } from "./harness.ts"
import { DatabaseLive, databaseConfigFromEnv, DEFAULT_PIPELINE, MAX_PIPELINE, pipelineFromEnv } from "../src/Database.ts"

/**
 * The server's backends that ran `n` statements started together on `pool`: each waits on a lock
 * that a connection of the test's own holds until `connections` of them are waiting (at most
 * 30 s), so none ends before the others have been sent, however slowly the pool connects.
 */
const backendsOf = <E>(n: number, connections: number, pool: Layer.Layer<SqlClient.SqlClient, E, DatabaseConfigRef>) =>
  Effect.gen(function*() {
    const config = yield* DatabaseConfigRef
    if (config._tag !== "Postgres") return yield* Effect.die(new Error("pipelining is PostgreSQL's"))
    const lock = Math.floor(Math.random() * 1_000_000_000)
    const holder = new pg.Client({ connectionString: config.url })
    yield* Effect.promise(async () => {
      await holder.connect()
      await holder.query("SELECT pg_advisory_lock($1)", [lock])
    })
    const released = Effect.promise(async () => {
      for (const started = Date.now(); Date.now() - started < 30_000;) {
        const { rows } = await holder.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND objid = $1 AND NOT granted",
          [lock]
        )
        if (rows[0]!.n >= connections) break
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      await holder.end()
    })
    const statements = Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return yield* Effect.forEach(
        Array.from({ length: n }, (_, i) => i),
        (i) => sql<{ readonly pid: number; readonly i: number }>`SELECT pg_backend_pid() AS pid, ${i}::int AS i FROM pg_advisory_xact_lock_shared(${lock})`,
        { concurrency: "unbounded" }
      )
    }).pipe(Effect.provide(pool))
    const [pids] = yield* Effect.all([statements, released], { concurrency: 2 })
    pids.forEach((rows, i) => assert.strictEqual(rows[0]!.i, i, "each statement gets its own row"))
    return new Set(pids.map((rows) => rows[0]!.pid)).size
  }).pipe(Effect.orDie)

/** The suite's database with `pipeline` statements a connection and a pool of 10. */
const withPipeline = (pipeline: number) =>
  Layer.unwrap(Effect.gen(function*() {
    const config = yield* DatabaseConfigRef
    if (config._tag !== "Postgres") return yield* Effect.die(new Error("pipelining is PostgreSQL's"))
    return DatabaseLive({ ...config, maxConnections: 10, pipeline }, { migrateOnStart: false })
  }))


describe("DATABASE_PIPELINE", () => {
  it("defaults to 2 and takes a whole number from 1 to 32, else says what it takes; so does a config's pipeline", () => {
    assert.strictEqual(DEFAULT_PIPELINE, 2)
    assert.strictEqual(pipelineFromEnv({}), 2)
    assert.strictEqual(pipelineFromEnv({ DATABASE_PIPELINE: "1" }), 1)
    assert.strictEqual(pipelineFromEnv({ DATABASE_PIPELINE: String(MAX_PIPELINE) }), 32)
    assert.deepStrictEqual(databaseConfigFromEnv({ DATABASE_URL: "postgres://db/x", DATABASE_PIPELINE: "8" }), {
      _tag: "Postgres",
      url: "postgres://db/x",
      pipeline: 8
    })
    for (const bad of ["0", "33", "2.5", "-1", "many"]) {
      assert.throws(() => pipelineFromEnv({ DATABASE_PIPELINE: bad }), `DATABASE_PIPELINE must be a whole number from 1 to 32, not "${bad}".`)
    }
    assert.deepStrictEqual(databaseConfigFromEnv({ DATABASE_PIPELINE: "many" }), { _tag: "Embedded", dataDir: ".chamber/data" })
    for (const bad of [0, 1.5, 33]) {
      assert.throws(() => DatabaseLive({ _tag: "Postgres", url: "postgres://db/x", pipeline: bad }), `The database's pipeline must be a whole number from 1 to 32, not "${bad}".`)
    }
  })
})

for (const postgres of postgresOnly("pipelined statements on PostgreSQL")) {
  describe("pipelined statements on PostgreSQL", () => {
    layer(postgres.database, { timeout: 60_000 })((it) => {
      it.effect("8 statements in flight take 2 connections at 4 a connection, 8 at 1", () =>
        Effect.gen(function*() {
          assert.strictEqual(yield* backendsOf(8, 2, withPipeline(4)), 2)
          assert.strictEqual(yield* backendsOf(8, 8, withPipeline(1)), 8)
        }))

      it.effect("a failing statement fails alone; those sharing its connection get their rows", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const results = yield* Effect.forEach(
            [1, 2, 0, 4, 5, 0, 7, 8],
            (d) => Effect.exit(sql<{ readonly q: number }>`SELECT (56 / ${d}::int)::int AS q`),
            { concurrency: "unbounded" }
          )
          assert.deepStrictEqual(
            results.map((exit) => Exit.isSuccess(exit) ? exit.value[0]!.q : "failed"),
            [56, 28, "failed", 14, 11, "failed", 8, 7]
          )
          assert.deepStrictEqual(yield* sql`SELECT 1 AS one`, [{ one: 1 }])
        }).pipe(Effect.provide(withPipeline(8))))

      it.effect("a transaction keeps its connection: statements pipelined meanwhile see none of its rows until it commits", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          yield* sql`CREATE TABLE IF NOT EXISTS pipeline_notes (id int PRIMARY KEY)`
          yield* sql`TRUNCATE pipeline_notes`
          const seen = Effect.forEach([1, 2, 3, 4], () => sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM pipeline_notes`, {
            concurrency: "unbounded"
          }).pipe(Effect.map((all) => all.map((rows) => rows[0]!.n)))
          const inserted = yield* Deferred.make<void>()
          const looked = yield* Deferred.make<void>()
          const transaction = yield* sql.withTransaction(Effect.gen(function*() {
            yield* sql`INSERT INTO pipeline_notes (id) VALUES (1), (2)`
            yield* Deferred.succeed(inserted, undefined)
            yield* Deferred.await(looked)
            return (yield* sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM pipeline_notes`)[0]!.n
          })).pipe(Effect.forkChild)
          yield* Deferred.await(inserted)
          assert.deepStrictEqual(yield* seen, [0, 0, 0, 0], "outside the open transaction")
          yield* Deferred.succeed(looked, undefined)
          assert.strictEqual(yield* Fiber.join(transaction), 2, "inside it")
          assert.deepStrictEqual(yield* seen, [2, 2, 2, 2], "once it committed")
          const undone = yield* Effect.exit(sql.withTransaction(
            sql`INSERT INTO pipeline_notes (id) VALUES (3)`.pipe(Effect.andThen(Effect.fail("undo" as const)))
          ))
          assert.isTrue(Exit.isFailure(undone))
          assert.deepStrictEqual(yield* seen, [2, 2, 2, 2], "after a rollback")
        }).pipe(Effect.orDie, Effect.provide(withPipeline(4))))

      it.effect("a statement whose fiber is cut still runs to its end, and its connection serves the next statements their own rows", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const started = Date.now()
          yield* Effect.exit(sql`SELECT 'slow' AS who FROM pg_sleep(0.3)`.pipe(Effect.timeout("50 millis")))
          assert.isAtLeast(Date.now() - started, 290, "a pipelined statement cannot be cancelled without cancelling its neighbours")
          const after = yield* Effect.forEach(
            [1, 2, 3],
            (i) => sql<{ readonly who: string }>`SELECT ${`next ${i}`}::text AS who`,
            { concurrency: "unbounded" }
          )
          assert.deepStrictEqual(after.map((rows) => rows[0]!.who), ["next 1", "next 2", "next 3"])
        }).pipe(Effect.orDie, Effect.provide(withPipeline(32))))
    })
  })
}
