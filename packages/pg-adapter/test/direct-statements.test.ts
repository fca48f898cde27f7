/**
 * The direct path of the hot statements (repos/DirectStatements.ts), on embedded PGlite and on
 * PostgreSQL: inside a transaction a statement runs on that transaction's connection (its writes
 * are undone with it and seen by its later reads), outside one on a connection borrowed from the
 * pool, an embedder's tracer still gets a span per statement, and a client that transforms rows
 * is refused at start.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as SqlClient from "effect/sql/SqlClient"
import * as Tracer from "effect/Tracer"
import { PgClient } from "@effect/sql-pg"
import { DatabaseLive } from "../src/index.ts"
import * as Statement from "effect/sql/Statement"
import { directStatements, poolBorrower } from "../src/repos/DirectStatements.ts"
import { parametersOf } from "../src/repos/ResourceSql.ts"
import { onDatabase, runtimes } from "./harness.ts"

/** A table of this suite's own, empty before each test. */
const table = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE IF NOT EXISTS in_tx_notes (id bigserial PRIMARY KEY, body text NOT NULL)`
  yield* sql`TRUNCATE in_tx_notes`
  return { sql, run: directStatements(sql) }
}).pipe(Effect.orDie)

const count = (sql: SqlClient.SqlClient) =>
  sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM in_tx_notes`.pipe(Effect.map((rows) => rows[0]!.n), Effect.orDie)

/** A tracer that keeps the names of the spans it makes. */
const recording = () => {
  const names: Array<string> = []
  const tracer = Tracer.make({
    span(options) {
      names.push(options.name)
      return new Tracer.NativeSpan(options)
    }
  })
  return { names, tracer }
}

for (const rt of runtimes()) {
  describe(`direct statements on ${rt.name}`, () => {
    layer(onDatabase(rt, (config) => DatabaseLive(config)), { timeout: 120_000 })((it) => {
      it.effect("a failed transaction takes back what its statements wrote", () =>
        Effect.gen(function*() {
          const { run, sql } = yield* table
          const exit = yield* sql.withTransaction(Effect.gen(function*() {
            const note = { body: "kept only if committed" }
            const text = run.textOf("note", () => sql`INSERT INTO in_tx_notes ${sql.insert(note)} RETURNING id`, [note.body])
            yield* run.rows(text, [note.body])
            yield* run.values("INSERT INTO in_tx_notes (body) VALUES ($1) RETURNING id", ["and a second one"])
            return yield* Effect.fail("refused")
          })).pipe(Effect.exit)
          assert.isTrue(Exit.isFailure(exit))
          assert.strictEqual(yield* count(sql), 0)
        }))

      it.effect("its later statements see its own writes, and they stay once it commits", () =>
        Effect.gen(function*() {
          const { run, sql } = yield* table
          const seen = yield* sql.withTransaction(Effect.gen(function*() {
            const [row] = yield* run.rows<{ readonly id: string }>("INSERT INTO in_tx_notes (body) VALUES ($1) RETURNING id", ["first"])
            const values = yield* run.values("SELECT id, body FROM in_tx_notes WHERE id = $1", [Number(row!.id)])
            return values.map(([, body]) => body)
          }))
          assert.deepStrictEqual(seen, ["first"])
          assert.strictEqual(yield* count(sql), 1)
        }))

      it.effect("outside a transaction a statement runs on a connection borrowed from the pool", () =>
        Effect.gen(function*() {
          const { run, sql } = yield* table
          // The pool's borrower is what effect/sql keeps on its statements without declaring it:
          // without it the direct path outside a transaction would silently be the statement path.
          assert.isFunction(poolBorrower(sql))
          yield* run.rows("INSERT INTO in_tx_notes (body) VALUES ($1)", ["alone"])
          const rows = yield* run.rows<{ readonly body: string }>("SELECT body FROM in_tx_notes", [])
          const values = yield* run.values("SELECT body, 2 FROM in_tx_notes", [])
          assert.deepStrictEqual(rows.map((r) => r.body), ["alone"])
          assert.deepStrictEqual(values, [["alone", 2]])
        }))

      it.effect("a statement's text is compiled once per shape from its template, and only with the template's own parameters", () =>
        Effect.gen(function*() {
          const { run, sql } = yield* table
          const note = (body: string, at: Date) => ({ body, at })
          yield* sql`ALTER TABLE in_tx_notes ADD COLUMN IF NOT EXISTS at timestamptz`
          const insert = (record: { readonly body: string; readonly at: Date }, params: ReadonlyArray<unknown>) =>
            run.textOf(`insert ${Object.keys(record).join(",")}`, () => sql`INSERT INTO in_tx_notes ${sql.insert(record)}`, params)
          const first = note("one", new Date())
          assert.throws(() => insert(first, [first.at, first.body]), /not the statement's own/)
          const text = insert(first, [first.body, first.at])
          assert.match(text, /^INSERT INTO in_tx_notes \("body","at"\) VALUES \(\$1,\$2\)$/)
          const second = note("two", new Date())
          assert.strictEqual(insert(second, [second.body, second.at]), text)
          yield* sql.withTransaction(Effect.forEach([first, second], (n) => run.rows(text, [n.body, n.at])))
          assert.strictEqual(yield* count(sql), 2)
        }))

      it.effect("with a tracer, every statement of a transaction is still a span", () =>
        Effect.gen(function*() {
          const { run, sql } = yield* table
          const { names, tracer } = recording()
          yield* sql.withTransaction(Effect.gen(function*() {
            yield* run.rows("INSERT INTO in_tx_notes (body) VALUES ($1)", ["traced"])
            yield* run.values("SELECT body FROM in_tx_notes", [])
          })).pipe(Effect.provideService(Tracer.Tracer, tracer))
          const statements = names.filter((name) => name !== "sql.transaction")
          assert.strictEqual(statements.length, 2, `spans: ${names.join(", ")}`)
          yield* run.rows("SELECT body FROM in_tx_notes", []).pipe(Effect.provideService(Tracer.Tracer, tracer))
          assert.strictEqual(names.filter((name) => name !== "sql.transaction").length, 3, `spans: ${names.join(", ")}`)
          assert.strictEqual(yield* count(sql), 1)
        }))
    })
  })
}

describe("direct statements, refused", () => {
  layer(Layer.empty)((it) => {
    it("a SQL fragment among an insert's values is refused: its text would change from call to call", () => {
      assert.deepStrictEqual(parametersOf({ a: 1, b: undefined, c: "x" }), [1, null, "x"])
      assert.throws(() => parametersOf({ a: 1, doc: Statement.fragment([Statement.literal("now()")]) }), /doc is a SQL fragment/)
    })

    it.effect("a client that renames result columns is refused when the repositories are built", () =>
      Effect.gen(function*() {
        const client = PgClient.layer({ url: Redacted.make("postgres://nobody@127.0.0.1:1/none"), transformResultNames: (s) => s.toUpperCase() })
        const exit = yield* Effect.exit(Effect.scoped(Layer.build(client)).pipe(
          Effect.flatMap((context) => Effect.sync(() => directStatements(context.mapUnsafe.get(SqlClient.SqlClient.key) as SqlClient.SqlClient)))
        ))
        assert.isTrue(Exit.isFailure(exit))
        assert.match(String(Exit.isFailure(exit) ? exit.cause : ""), /transforms rows/)
      }))
  })
})
