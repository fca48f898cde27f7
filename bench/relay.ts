/**
 * `pnpm bench`'s webhook relay section (BENCH_ONLY=relay; bench/README.md "Webhook relay"): two
 * `chamber relay` processes against two processes of a minimal plain loop (relay-baseline.ts),
 * in alternating rounds on the same work, delivering to one HTTPS receiver in the bench process.
 * A round: the delivery tables emptied and settled, the two processes started, a warm-up burst;
 * then (a) throughput: BENCH_RELAY_EVENTS deliveries committed in one transaction and drained,
 * deliveries/s = their count / (last receipt - COMMIT); (b) commit-to-receipt: one event per
 * transaction at BENCH_RELAY_RATE deliveries/s for BENCH_RELAY_SECONDS, latency = receipt - the
 * moment COMMIT returned, both on this process's clock. Then the processes stop and the round is
 * checked: every delivery received exactly once, both signatures valid on every one, none left
 * pending (and, for ours, one attempt recorded per delivery).
 */
import { cpus, loadavg, tmpdir } from "node:os"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import * as ManagedRuntime from "effect/ManagedRuntime"
import pg from "pg"
import { StorageLive } from "../packages/pg-adapter/src/index.ts"
import { verify, verifyStandard } from "../packages/webhook-relay/src/Signature.ts"
import { collectLines, cpuSeconds, newOutput, type Output, procStatus, spawnNode, stopChild } from "./processes.ts"
import { startBenchReceiver } from "./relay-receiver.ts"
import { commitEvents, meanFanout, type PlannedEvent, planEvents, seedHistory, setupChamber } from "./relay-work.ts"
import { CHAMBER_NODE_FLAGS } from "./shared.ts"

const DELIVERIES = Number(process.env.BENCH_RELAY_EVENTS ?? 20_000)
const HOOKS = Number(process.env.BENCH_RELAY_HOOKS ?? 40)
const RATE = Number(process.env.BENCH_RELAY_RATE ?? 1_000)
const SECONDS = Number(process.env.BENCH_RELAY_SECONDS ?? 10)
const ROUNDS = Math.max(1, Number(process.env.BENCH_RELAY_ROUNDS ?? 2))
const WARMUP = Number(process.env.BENCH_RELAY_WARMUP ?? 2_000)
const HISTORY = Number(process.env.BENCH_RELAY_HISTORY ?? 100_000)
const TIMEOUT_MS = Number(process.env.BENCH_RELAY_TIMEOUT ?? 300) * 1000
const PROCESSES = 2
export const RELAY_BAR = { deliveriesPerSecond: 2_000, p50Ms: 50 }
/** Set for the bench's chamber, so secrets are stored encrypted as in production and every relay opens them. */
const SECRET_KEY = "relay bench secret key"

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url))

export interface RelayBenchContext {
  readonly dbUrl: string
  readonly db: pg.Client
  readonly log: (line: string) => void
  readonly elapsed: () => string
}

type Name = "ours" | "baseline"

interface Round {
  readonly name: Name
  readonly deliveries: number
  readonly seconds: number
  readonly relayCpu: number
  readonly dbCpu: number
  readonly latencies: ReadonlyArray<number>
  readonly peakRssMb: number
  /** TLS connections the receiver accepted in the round. */
  readonly connections: number
  readonly problems: ReadonlyArray<string>
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const sum = (events: ReadonlyArray<PlannedEvent>) => events.reduce((n, e) => n + e.fanout, 0)

const percentile = (values: ReadonlyArray<number>) => {
  const sorted = Float64Array.from(values).sort()
  return (p: number) => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!)
}

const f = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : "n/a")
const pad = (s: string, n: number) => s.padStart(n)

export const benchRelay = async (ctx: RelayBenchContext): Promise<void> => {
  const { db, log } = ctx
  process.env.CHAMBER_SECRET_KEY = SECRET_KEY
  const runtime = ManagedRuntime.make(StorageLive({ _tag: "Postgres", url: ctx.dbUrl, maxConnections: 10 }))
  const receiver = await startBenchReceiver()
  try {
    const caFile = join(tmpdir(), `relay-bench-${process.pid}-ca.pem`)
    writeFileSync(caFile, receiver.ca)
    const { tenantId, subscriptions } = await runtime.runPromise(setupChamber(HOOKS, receiver.url))
    const pathOf = new Map(subscriptions.map((s) => [s.id, s.path]))
    const secretOf = new Map(subscriptions.map((s) => [s.path, s.secret]))
    const tables = ["webhook_attempts", "webhook_deliveries", "outbox_events", "webhook_subscriptions"]
    for (const table of tables) await db.query(`ALTER TABLE ${table} SET (autovacuum_enabled = false, toast.autovacuum_enabled = false)`)
    const history = await seedHistory(db, tenantId, subscriptions, HISTORY)

    const warm = planEvents(subscriptions, WARMUP, 0)
    const burst = planEvents(subscriptions, DELIVERIES, warm.length)
    const stream = planEvents(subscriptions, RATE * SECONDS, warm.length + burst.length)
    const fanout = meanFanout(subscriptions)
    log(
      `\nwebhook relay: ${PROCESSES} processes each, ${subscriptions.length} subscriptions on one HTTPS receiver (${receiver.url}), ` +
        `${f(fanout)} deliveries per event on average; ${ROUNDS} alternating rounds; load average ${loadavg().map((n) => n.toFixed(1)).join(" ")}`
    )
    log(
      `  a round: warm-up ${sum(warm)} deliveries; throughput ${sum(burst)} deliveries (${burst.length} events) committed in one transaction; ` +
        `commit-to-receipt ${stream.length} events one per transaction over ${SECONDS} s (${f(sum(stream) / SECONDS, 0)} deliveries/s); ` +
        `over a settled history of ${history.deliveries} deliveries`
    )

    const env = (name: Name): NodeJS.ProcessEnv => ({
      ...process.env,
      DATABASE_URL: ctx.dbUrl,
      CHAMBER_SECRET_KEY: SECRET_KEY,
      CHAMBER_WEBHOOK_ALLOW_PRIVATE: "true",
      NODE_EXTRA_CA_CERTS: caFile,
      NODE_ENV: "production",
      NO_COLOR: "1",
      ...(name === "baseline" ? { PGAPPNAME: "bench-baseline-relay" } : {})
    })
    const outputs: Record<Name, Output> = { ours: newOutput(), baseline: newOutput() }

    const start = (name: Name, i: number) =>
      new Promise<ReturnType<typeof spawnNode>>((resolve, reject) => {
        const args = name === "ours"
          ? [...CHAMBER_NODE_FLAGS, here("../packages/cli/src/bin.ts"), "relay", "--json"]
          : [here("./relay-baseline.ts")]
        const child = spawnNode(args, env(name))
        const ready = name === "ours" ? /Webhook relay running/ : /^BENCH_RELAY_READY$/
        const timer = setTimeout(() => reject(new Error(`${name} relay did not start within 60 s`)), 60_000)
        collectLines(child.stderr!, outputs[name])
        collectLines(child.stdout!, outputs[name], (line) => {
          if (!ready.test(line)) return false
          clearTimeout(timer)
          resolve(child)
          return true
        })
        child.once("exit", (code, signal) => {
          clearTimeout(timer)
          reject(new Error(`${name} relay exited early (code ${code}, signal ${signal})\n${outputs[name].first.join("\n")}`))
        })
      })

    /** Back to the history alone, the subscriptions as new, dead rows vacuumed and pages flushed: no round pays for another. */
    const reset = async () => {
      await db.query("DELETE FROM webhook_attempts WHERE id > $1", [history.attempts])
      await db.query("DELETE FROM webhook_deliveries WHERE id > $1", [history.deliveries])
      await db.query("DELETE FROM outbox_events WHERE id > $1", [history.events])
      await db.query("UPDATE webhook_subscriptions SET active = true, failure_count = 0 WHERE tenant_id = $1", [tenantId])
      await db.query(`VACUUM (ANALYZE) ${tables.join(", ")}`)
      await db.query("CHECKPOINT").catch(() => {})
    }

    /** CPU seconds so far of the database's backends (this bench's own idle ones included; they do nothing meanwhile). */
    const backendCpu = async () => {
      const pids = (await db.query("SELECT pid FROM pg_stat_activity WHERE datname = current_database()")).rows.map((r) => Number(r.pid))
      return new Map(pids.map((pid) => [pid, cpuSeconds(pid)]))
    }
    const cpuSince = (before: Map<number, number>, after: Map<number, number>) =>
      [...after].reduce((n, [pid, cpu]) => n + (Number.isFinite(cpu) ? cpu - (before.get(pid) ?? 0) : 0), 0)

    const commit = (events: ReadonlyArray<PlannedEvent>) => runtime.runPromise(commitEvents(tenantId, events))

    /** Waits for `count` receipts; if they do not come, says where the missing deliveries stand. */
    const received = (count: number) =>
      receiver.waitFor(count, TIMEOUT_MS).catch(async (error) => {
        const states = (await db.query(
          `SELECT status, attempt_count, lease_expires_at > now() AS leased, count(*)::int AS n FROM webhook_deliveries
           WHERE status <> 'succeeded' GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`
        )).rows.map((r) => `${r.n} ${r.status} after ${r.attempt_count} attempts${r.leased ? ", leased" : ""}`)
        const errors = (await db.query(
          `SELECT coalesce(status::text, error) AS what, count(*)::int AS n FROM webhook_attempts WHERE status IS DISTINCT FROM 200 GROUP BY 1 ORDER BY 2 DESC LIMIT 5`
        )).rows.map((r) => `${r.n} x ${r.what}`)
        const printed = [...outputs.ours.first, ...outputs.baseline.first].map((line) => `\n  | ${line.slice(0, 300)}`).join("")
        throw new Error(`${error.message}; not delivered: ${states.join(", ") || "none"}; failed attempts: ${errors.join("; ") || "none"}${printed}`)
      })

    const check = async (name: Name): Promise<Array<string>> => {
      const problems: Array<string> = []
      const rows = (await db.query(
        `SELECT e.event_id, d.hook_id::int AS hook, d.status FROM webhook_deliveries d JOIN outbox_events e ON e.id = d.event_id WHERE d.id > $1`,
        [history.deliveries]
      )).rows
      const expected = new Set(rows.map((r) => `${r.event_id} ${pathOf.get(r.hook)}`))
      const pending = rows.filter((r) => r.status !== "succeeded").length
      if (pending > 0) problems.push(`${pending} deliveries not settled as succeeded`)
      const seen = new Map<string, number>()
      let badSignatures = 0
      for (const r of receiver.receipts) {
        const key = `${r.event} ${r.path}`
        seen.set(key, (seen.get(key) ?? 0) + 1)
        const secret = secretOf.get(r.path)
        const raw = r.body.toString("utf8")
        const h = r.headers
        const good = secret !== undefined &&
          verify(secret, raw, String(h["x-cc-signature"])) &&
          verifyStandard(secret, String(h["webhook-id"]), String(h["webhook-timestamp"]), raw, String(h["webhook-signature"])) &&
          h["webhook-id"] === r.event && JSON.parse(raw).id === r.event
        if (!good) badSignatures++
      }
      const missing = [...expected].filter((k) => !seen.has(k)).length
      const duplicates = [...seen.values()].reduce((n, c) => n + c - 1, 0)
      const unexpected = [...seen.keys()].filter((k) => !expected.has(k)).length
      if (missing > 0) problems.push(`${missing} deliveries never received`)
      if (duplicates > 0) problems.push(`${duplicates} deliveries received more than once`)
      if (unexpected > 0) problems.push(`${unexpected} requests for no delivery`)
      if (badSignatures > 0) problems.push(`${badSignatures} requests with a bad signature`)
      if (name === "ours") {
        const attempts = (await db.query(
          `SELECT count(*)::int AS n, count(*) FILTER (WHERE status = 200)::int AS ok FROM webhook_attempts WHERE id > $1`,
          [history.attempts]
        )).rows[0]
        if (attempts.n !== rows.length || attempts.ok !== rows.length) problems.push(`${attempts.n} attempts recorded (${attempts.ok} of them 200) for ${rows.length} deliveries`)
      }
      return problems
    }

    /**
     * The baseline's claim reads waiting deliveries in due order: the index it needs, there for its
     * rounds only (the product's claim reads per subscription and has its own).
     */
    const baselineIndex = (on: boolean) =>
      db.query(on
        ? "CREATE INDEX IF NOT EXISTS bench_baseline_due ON webhook_deliveries (next_attempt_at, id) WHERE status = 'pending'"
        : "DROP INDEX IF EXISTS bench_baseline_due")

    const round = async (name: Name, index: number): Promise<Round> => {
      await baselineIndex(name === "baseline")
      await reset()
      receiver.clear()
      const connectionsBefore = receiver.connections()
      const relays = await Promise.all(Array.from({ length: PROCESSES }, (_, i) => start(name, i)))
      const relayCpu = () => relays.reduce((n, r) => n + cpuSeconds(r.pid!), 0)
      // The relays LISTEN as they start their loop, just after they say they run.
      await sleep(500)
      try {
        await commit(warm)
        await received(sum(warm))

        const before = receiver.receipts.length
        const target = before + sum(burst)
        const cpu0 = relayCpu()
        const { committedAt } = await commit(burst)
        const db0 = await backendCpu()
        await received(target)
        const [cpu1, db1] = [relayCpu(), await backendCpu()]
        const last = receiver.receipts.slice(before, target).reduce((m, r) => Math.max(m, r.at), 0)
        const seconds = (last - committedAt) / 1000

        const committed = new Map<string, number>()
        const streamStart = receiver.receipts.length
        const t0 = performance.now()
        const interval = (SECONDS * 1000) / stream.length
        const commits: Array<Promise<void>> = []
        for (let i = 0; i < stream.length; i++) {
          const wait = t0 + i * interval - performance.now()
          if (wait > 0) await sleep(wait)
          commits.push(commit([stream[i]!]).then(({ committedAt, ids }) => void committed.set(ids[0]!, committedAt)))
        }
        await Promise.all(commits)
        await received(streamStart + sum(stream))
        await sleep(200)
        const latencies = receiver.receipts.slice(streamStart).map((r) => r.at - (committed.get(r.event) ?? NaN))
        const peakRssMb = Math.max(...relays.map((r) => procStatus(r.pid!, "VmHWM")))
        await Promise.all(relays.map((r) => stopChild(r)))
        const problems = await check(name)
        const p = percentile(latencies)
        log(
          `[${ctx.elapsed()}] relay round ${index}/${ROUNDS} ${name}: ${f(sum(burst) / seconds)} deliveries/s, ` +
            `commit-to-receipt p50 ${f(p(50))} ms p99 ${f(p(99))} ms${problems.length === 0 ? "" : `; PROBLEMS: ${problems.join("; ")}`}`
        )
        const connections = receiver.connections() - connectionsBefore
        return { name, deliveries: sum(burst), seconds, relayCpu: cpu1 - cpu0, dbCpu: cpuSince(db0, db1), latencies, peakRssMb, connections, problems }
      } finally {
        await Promise.all(relays.map((r) => stopChild(r)))
      }
    }

    const rounds: Array<Round> = []
    for (let i = 1; i <= ROUNDS; i++) {
      for (const name of ["ours", "baseline"] as const) rounds.push(await round(name, i))
    }
    report(log, rounds, outputs)
  } finally {
    await receiver.close()
    await runtime.dispose()
  }
}

interface Measured {
  readonly deliveriesPerSecond: number
  readonly p50: number
  readonly p99: number
  readonly max: number
  readonly relayCpuMs: number
  readonly dbCpuMs: number
  readonly peakRssMb: number
  readonly deliveries: number
  readonly problems: ReadonlyArray<string>
}

const measure = (rounds: ReadonlyArray<Round>): Measured => {
  const latencies = rounds.flatMap((r) => r.latencies)
  const p = percentile(latencies)
  const deliveries = rounds.reduce((n, r) => n + r.deliveries, 0)
  return {
    deliveriesPerSecond: deliveries / rounds.reduce((n, r) => n + r.seconds, 0),
    p50: p(50),
    p99: p(99),
    max: p(100),
    relayCpuMs: (rounds.reduce((n, r) => n + r.relayCpu, 0) * 1000) / deliveries,
    dbCpuMs: (rounds.reduce((n, r) => n + r.dbCpu, 0) * 1000) / deliveries,
    peakRssMb: Math.max(...rounds.map((r) => r.peakRssMb)),
    deliveries: deliveries + latencies.length,
    problems: rounds.flatMap((r) => r.problems)
  }
}

const report = (log: (line: string) => void, rounds: ReadonlyArray<Round>, outputs: Record<Name, Output>) => {
  const ours = measure(rounds.filter((r) => r.name === "ours"))
  const baseline = measure(rounds.filter((r) => r.name === "baseline"))
  log(
    `\nwebhook relay: ${PROCESSES} processes each, ${cpus().length} CPUs shared by the bench (receiver, commits), the relays and PostgreSQL; ` +
      `load average now ${loadavg().map((n) => n.toFixed(1)).join(" ")}`
  )
  log("deliveries/s = a burst's deliveries / (its last receipt - its COMMIT), over every round; p50/p99/max = commit-to-receipt of every")
  log("delivery of the steady phase; CPU ms/delivery over the bursts: the relay processes' user+sys, and PostgreSQL's backends on this database")
  log(`  ${"relay".padEnd(9)}${pad("deliv/s", 9)}${pad("p50 ms", 9)}${pad("p99 ms", 9)}${pad("max ms", 9)}${pad("relay CPU ms", 14)}${pad("DB CPU ms", 11)}${pad("peak RSS MB", 13)}${pad("delivered", 11)}  problems`)
  for (const [name, m] of [["ours", ours], ["baseline", baseline]] as const) {
    log(
      `  ${name.padEnd(9)}${pad(f(m.deliveriesPerSecond), 9)}${pad(f(m.p50), 9)}${pad(f(m.p99), 9)}${pad(f(m.max), 9)}${pad(f(m.relayCpuMs, 3), 14)}` +
        `${pad(f(m.dbCpuMs, 3), 11)}${pad(f(m.peakRssMb), 13)}${pad(String(m.deliveries), 11)}  ${m.problems.length === 0 ? "none" : m.problems.join("; ")}`
    )
  }
  log(
    `  ours/baseline: throughput ${f(ours.deliveriesPerSecond / baseline.deliveriesPerSecond, 2)}x, p50 ${f(ours.p50 / baseline.p50, 2)}x, ` +
      `p99 ${f(ours.p99 / baseline.p99, 2)}x, relay CPU/delivery ${f(ours.relayCpuMs / baseline.relayCpuMs, 2)}x, DB CPU/delivery ${f(ours.dbCpuMs / baseline.dbCpuMs, 2)}x`
  )
  const connections = (name: Name) => rounds.filter((r) => r.name === name).map((r) => r.connections).join(", ")
  log(`  TLS connections the receiver accepted, per round: ours ${connections("ours")}; baseline ${connections("baseline")}`)
  const clean = ours.problems.length === 0 && baseline.problems.length === 0
  const pass = ours.deliveriesPerSecond >= RELAY_BAR.deliveriesPerSecond && ours.p50 <= RELAY_BAR.p50Ms && clean
  log(
    `${pass ? "PASS" : "FAIL"}: relay ${f(ours.deliveriesPerSecond, 0)} deliveries/s (bar >= ${RELAY_BAR.deliveriesPerSecond}/s), ` +
      `commit-to-receipt p50 ${f(ours.p50)} ms (bar <= ${RELAY_BAR.p50Ms} ms), p99 ${f(ours.p99)} ms` +
      (clean ? "; every delivery received once, signatures valid, none left pending" : " -- a round had problems (above), the run does not count")
  )
  for (const name of ["ours", "baseline"] as const) {
    const output = outputs[name]
    if (output.lines === 0) continue
    log(`\nnote: the ${name} relays printed ${output.lines} line(s); first lines:`)
    for (const line of output.first.slice(0, 4)) log(`  | ${line.slice(0, 160)}`)
  }
}
