/**
 * `node bench/first-write.ts` (bench/README.md "First write"): a chamber of BENCH_FIRST_MEMBERS
 * members and BENCH_FIRST_HOOKS subscriptions on a fresh database, every member updated
 * BENCH_FIRST_REPEAT times in one transaction, first as it is, then twice after `ANALYZE`
 * (BENCH_FIRST_STATS=empty: `VACUUM ANALYZE` while empty first); the backend's CPU from /proc.
 */
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as SqlClient from "effect/sql/SqlClient"
import pg from "pg"
import { Members, Transactor } from "../packages/core/src/index.ts"
import { StorageLive } from "../packages/pg-adapter/src/index.ts"
import { cpuSeconds } from "./processes.ts"
import { f, noAutovacuum } from "./shared.ts"

const N = Number(process.env.BENCH_FIRST_MEMBERS ?? 250)
const REPEAT = Number(process.env.BENCH_FIRST_REPEAT ?? 2)
const HOOKS = Number(process.env.BENCH_FIRST_HOOKS ?? 40)
const EMPTY = process.env.BENCH_FIRST_STATS === "empty"
const base = process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres"
const name = `chamber_bench_first_${Date.now().toString(36)}`
const admin = new pg.Client({ connectionString: base })
await admin.connect()
await admin.query(`CREATE DATABASE ${name}`)
const url = Object.assign(new URL(base), { pathname: `/${name}` }).toString()
const runtime = ManagedRuntime.make(StorageLive({ _tag: "Postgres", url, maxConnections: 1 }))
const db = new pg.Client({ connectionString: url })
await db.connect()
try {
  await runtime.runPromise(Effect.void)
  await noAutovacuum(db, ["webhook_deliveries", "outbox_events", "webhook_subscriptions", "members", "webhook_attempts"])
  if (EMPTY) await db.query("VACUUM ANALYZE")
  const tenant = Number((await db.query(`INSERT INTO tenants (public_id, name) VALUES ('chm_r', 'R') RETURNING id`)).rows[0].id)
  const ids = (await db.query(`INSERT INTO members (tenant_id, name, slug, status) SELECT $1, 'M ' || g, 'm-' || g, 'active' FROM generate_series(1, $2) g RETURNING id`,
    [tenant, N])).rows.map((r) => Number(r.id))
  await db.query(`INSERT INTO webhook_subscriptions (tenant_id, url, events, secret)
    SELECT $1, 'https://h' || g || '.example/x', '["member.updated"]', 's' FROM generate_series(1, $2) g`, [tenant, HOOKS])
  const pid = await runtime.runPromise(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return (yield* sql<{ p: number }>`SELECT pg_backend_pid() AS p`)[0]!.p
  }))
  const burst = (round: number) =>
    runtime.runPromise(Effect.gen(function*() {
      const [members, tx] = [yield* Members, yield* Transactor]
      const [c0, t0] = [cpuSeconds(pid), performance.now()]
      yield* tx.withTransaction(Effect.forEach(ids, (id) =>
        Effect.forEach(Array.from({ length: REPEAT }, (_, k) => k), (k) => members.update(tenant, id, { name: `M ${id} r${round}.${k}` }), { discard: true }), { discard: true }))
      return `${(performance.now() - t0).toFixed(0)} ms, database backend CPU ${f((cpuSeconds(pid) - c0) * 1000, 0)} ms`
    }))
  const settle = () => db.query(`UPDATE webhook_deliveries SET status = 'succeeded', settled_at = now() WHERE status = 'pending'`)
  console.log(`${N * REPEAT} member updates in one transaction, ${HOOKS} subscriptions each (${N * REPEAT * HOOKS} deliveries)`)
  console.log(`first write (${EMPTY ? "analyzed while empty" : "never analyzed"}): ${await burst(1)}`)
  for (const [round, what] of [[2, "after ANALYZE"], [3, "after ANALYZE, again"]] as const) {
    await settle()
    await db.query("ANALYZE")
    console.log(`${what}: ${await burst(round)}`)
  }
} finally {
  await db.end()
  await runtime.dispose()
  await admin.query(`DROP DATABASE ${name} WITH (FORCE)`)
  await admin.end()
}
