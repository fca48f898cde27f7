/**
 * `pnpm bench`'s webhook relay section (BENCH_ONLY=relay, bench/README.md "Webhook relay"): two
 * `chamber relay` processes against two of the minimal loop (relay-baseline.ts), rounds taken in
 * turn on the same work: a burst's deliveries/s, then commit-to-receipt at a steady rate; every
 * delivery checked (received once, signatures valid, none pending, ours in order, one attempt each).
 */
import { verify, verifyStandard } from "../packages/webhook-relay/src/index.ts"
import { cpuSeconds, type Output, postgresCpuSeconds, procStatus, startNode, stopChild } from "./processes.ts"
import { startBenchReceiver } from "./relay-receiver.ts"
import {
  commitEvents, commitPaced, meanFanout, type PlannedEvent, planEvents, relayEnv, relayRuntime, seedHistory, setupChamber, startOurRelay, startRelays
} from "./relay-work.ts"
import { benchScript, f, machine, noAutovacuum, notePrinted, percentile, type SectionContext, settleTables, sleep, verdict } from "./shared.ts"

const DELIVERIES = Number(process.env.BENCH_RELAY_EVENTS ?? 20_000)
const HOOKS = Number(process.env.BENCH_RELAY_HOOKS ?? 40)
const RATE = Number(process.env.BENCH_RELAY_RATE ?? 1_000)
const SECONDS = Number(process.env.BENCH_RELAY_SECONDS ?? 10)
const ROUNDS = Math.max(1, Number(process.env.BENCH_RELAY_ROUNDS ?? 2))
const WARMUP = Number(process.env.BENCH_RELAY_WARMUP ?? 2_000)
const HISTORY = Number(process.env.BENCH_RELAY_HISTORY ?? 100_000)
/** How many resources the events are about (each kind keys its own: members/5001, invoices/5001, ...). */
const RESOURCES = Math.max(1, Number(process.env.BENCH_RELAY_RESOURCES ?? 200))
const TIMEOUT_MS = Number(process.env.BENCH_RELAY_TIMEOUT ?? 300) * 1000
const PROCESSES = 2
/** Ours at least 2,000 a second, p50 within 50 ms; with ordering on, against the baseline (ruling 32): >= 0.9x its throughput, p99 <= 1.3x. */
const BAR = { deliveriesPerSecond: 2_000, p50Ms: 50, againstBaseline: 0.9, p99AgainstBaseline: 1.3 }
const TABLES = ["webhook_attempts", "webhook_deliveries", "outbox_events", "webhook_subscriptions"]

type Name = "ours" | "baseline"

/** A round of one relay: its burst's deliveries, seconds, the relays' and PostgreSQL's CPU seconds; the steady phase's latencies. */
type Round = {
  readonly name: Name; readonly deliveries: number; readonly seconds: number; readonly relayCpu: number; readonly databaseCpu: number
  readonly latencies: ReadonlyArray<number>; readonly peakRssMb: number; readonly problems: ReadonlyArray<string>
}

const sum = (events: ReadonlyArray<PlannedEvent>) => events.reduce((n, e) => n + e.fanout, 0)

export const benchRelay = async (ctx: SectionContext): Promise<void> => {
  const { db, log } = ctx
  const runtime = relayRuntime(ctx.dbUrl, "relay bench secret key")
  const receiver = await startBenchReceiver()
  try {
    const env = relayEnv(ctx.dbUrl, receiver.ca)
    const { tenantId, subscriptions } = await runtime.runPromise(setupChamber("Relay Bench Chamber of Commerce", HOOKS, () => receiver.url))
    const pathOf = new Map(subscriptions.map((s) => [s.id, s.path]))
    const secretOf = new Map(subscriptions.map((s) => [s.path, s.secret]))
    await noAutovacuum(db, TABLES)
    const history = await seedHistory(db, tenantId, subscriptions, HISTORY)
    const warm = planEvents(subscriptions, WARMUP, 0, RESOURCES)
    const burst = planEvents(subscriptions, DELIVERIES, warm.length, RESOURCES)
    const stream = planEvents(subscriptions, RATE * SECONDS, warm.length + burst.length, RESOURCES)
    log(`\nwebhook relay: ${PROCESSES} processes each, ${subscriptions.length} subscriptions on one HTTPS receiver, ${f(meanFanout(subscriptions))} ` +
      `deliveries an event, about ${RESOURCES === 1 ? "one hot resource" : `${RESOURCES} resources`}; a round: warm-up ${sum(warm)}, a burst of ${sum(burst)} in one ` +
      `transaction, then ${stream.length} events one a transaction over ${SECONDS} s; ${history.deliveries} settled deliveries of history; ${ROUNDS} rounds each`)
    const outputs: Record<Name, Array<Output>> = { ours: [], baseline: [] }
    const baseline = [benchScript("relay-baseline.ts")]
    const start = (name: Name) => () => name === "ours" ? startOurRelay(env) : startNode("the baseline relay", baseline, env, /^BENCH_RELAY_READY$/)
    /** Back to the history alone, subscriptions as new, dead rows vacuumed, pages flushed: no round pays for another. */
    const reset = async (name: Name) => {
      for (const [table, id] of [["webhook_attempts", history.attempts], ["webhook_deliveries", history.deliveries], ["outbox_events", history.events]] as const) {
        await db.query(`DELETE FROM ${table} WHERE id > $1`, [id])
      }
      await db.query("UPDATE webhook_subscriptions SET active = true, failure_count = 0 WHERE tenant_id = $1", [tenantId])
      // The baseline's claim reads waiting deliveries in due order: the index it needs, for its rounds only.
      await db.query(name === "ours" ? "DROP INDEX IF EXISTS bench_baseline_due"
        : "CREATE INDEX IF NOT EXISTS bench_baseline_due ON webhook_deliveries (next_attempt_at, id) WHERE status = 'pending'")
      // The baseline does not order deliveries: the trigger that lets a held one go is ours alone.
      await db.query(`ALTER TABLE webhook_deliveries ${name === "baseline" ? "DISABLE" : "ENABLE"} TRIGGER webhook_deliveries_next`)
      await settleTables(db, TABLES)
    }
    const commit = (events: ReadonlyArray<PlannedEvent>) => runtime.runPromise(commitEvents(tenantId, events))
    /** Waits for `count` receipts; if they do not come, says where the missing deliveries stand. */
    const received = (count: number) =>
      receiver.waitFor(count, TIMEOUT_MS).catch(async (error) => {
        const states = (await db.query(`SELECT status, attempt_count, count(*)::int AS n FROM webhook_deliveries WHERE status <> 'succeeded' GROUP BY 1, 2 ORDER BY 1, 2`))
          .rows.map((r) => `${r.n} ${r.status} after ${r.attempt_count} attempts`)
        const printed = [...outputs.ours, ...outputs.baseline].flatMap((o) => o.first).map((line) => `\n  | ${line.slice(0, 300)}`).join("")
        throw new Error(`${error.message}; not delivered: ${states.join(", ") || "none"}${printed}`)
      })
    const check = async (name: Name): Promise<Array<string>> => {
      const rows = (await db.query(`SELECT e.event_id, e.id::int AS position, d.resource, d.hook_id::int AS hook, d.status
        FROM webhook_deliveries d JOIN outbox_events e ON e.id = d.event_id WHERE d.id > $1`, [history.deliveries])).rows
      const placeOf = new Map(rows.map((r) => [`${r.event_id} ${pathOf.get(r.hook)}`, r]))
      const [expected, seen] = [new Set(placeOf.keys()), new Map<string, number>()]
      // Ours delivers one subscription's events of one resource in commit order (ruling 32).
      const last = new Map<string, number>()
      let [outOfOrder, badSignatures] = [0, 0]
      for (const r of receiver.receipts) {
        const key = `${r.event} ${r.path}`
        seen.set(key, (seen.get(key) ?? 0) + 1)
        const place = placeOf.get(key)
        if (place !== undefined) {
          const stream = `${r.path} ${place.resource}`
          if ((last.get(stream) ?? 0) > place.position) outOfOrder++
          last.set(stream, Math.max(last.get(stream) ?? 0, place.position))
        }
        const [secret, raw, h] = [secretOf.get(r.path), r.body.toString("utf8"), r.headers]
        const good = secret !== undefined && verify(secret, raw, String(h["x-cc-signature"])) &&
          verifyStandard(secret, String(h["webhook-id"]), String(h["webhook-timestamp"]), raw, String(h["webhook-signature"])) &&
          h["webhook-id"] === r.event && JSON.parse(raw).id === r.event
        if (!good) badSignatures++
      }
      const attempts = name === "ours"
        ? (await db.query(`SELECT count(*)::int AS n, count(*) FILTER (WHERE status = 200)::int AS ok FROM webhook_attempts WHERE id > $1`, [history.attempts])).rows[0]
        : { n: rows.length, ok: rows.length }
      const counts: ReadonlyArray<readonly [number, string]> = [
        [rows.filter((r) => r.status !== "succeeded").length, "deliveries not settled as succeeded"],
        [[...expected].filter((k) => !seen.has(k)).length, "deliveries never received"],
        [[...seen.values()].reduce((n, c) => n + c - 1, 0), "deliveries received more than once"],
        [[...seen.keys()].filter((k) => !expected.has(k)).length, "requests for no delivery"],
        [badSignatures, "requests with a bad signature"],
        [name === "ours" ? outOfOrder : 0, "deliveries received after a later event of their subscription and resource"],
        [Math.abs(attempts.n - rows.length) + attempts.n - attempts.ok, `attempts amiss: ${attempts.n} recorded (${attempts.ok} of them 200) for ${rows.length} deliveries`]
      ]
      return counts.filter(([n]) => n > 0).map(([n, what]) => `${n} ${what}`)
    }

    const round = async (name: Name, index: number): Promise<Round> => {
      await reset(name)
      receiver.clear()
      const relays = await startRelays(PROCESSES, start(name), outputs[name])
      const relayCpu = () => relays.reduce((n, r) => n + cpuSeconds(r.pid!), 0)
      try {
        await commit(warm)
        await received(sum(warm))
        const before = receiver.receipts.length
        const cpu0 = relayCpu()
        const { committedAt } = await commit(burst)
        // From the commit's return: the commit's own work is the committer's, not the relays'.
        const db0 = postgresCpuSeconds()
        // Statistics that know of the backlog, as autovacuum's ANALYZE soon has them in production:
        // the relays' statements are planned as they would be there.
        const analyzed = db.query("ANALYZE webhook_deliveries")
        await received(before + sum(burst))
        await analyzed
        const cpu = relayCpu() - cpu0
        const databaseCpu = postgresCpuSeconds() - db0
        const seconds = (receiver.receipts.slice(before).reduce((m, r) => Math.max(m, r.at), 0) - committedAt) / 1000
        const committed = new Map<string, number>()
        const streamStart = receiver.receipts.length
        await commitPaced(commit, (SECONDS * 1000) / stream.length, (i) => stream[i], (id, at) => void committed.set(id, at))
        await received(streamStart + sum(stream))
        await sleep(200)
        const latencies = receiver.receipts.slice(streamStart).map((r) => r.at - (committed.get(r.event) ?? NaN))
        const peakRssMb = Math.max(...relays.map((r) => procStatus(r.pid!, "VmHWM")))
        await Promise.all(relays.map((r) => stopChild(r)))
        const problems = await check(name)
        const p = percentile(latencies)
        log(`[${ctx.elapsed()}] relay round ${index}/${ROUNDS} ${name}: ${f(sum(burst) / seconds)} deliveries/s, ` +
          `commit-to-receipt p50 ${f(p(50))} ms p99 ${f(p(99))} ms${problems.length === 0 ? "" : `; PROBLEMS: ${problems.join("; ")}`}`)
        return { name, deliveries: sum(burst), seconds, relayCpu: cpu, databaseCpu, latencies, peakRssMb, problems }
      } finally {
        await Promise.all(relays.map((r) => stopChild(r)))
      }
    }

    const rounds: Array<Round> = []
    for (let i = 1; i <= ROUNDS; i++) for (const name of ["ours", "baseline"] as const) rounds.push(await round(name, i))
    report(log, rounds, outputs)
  } finally {
    await receiver.close()
    await runtime.dispose()
  }
}

const report = (log: (line: string) => void, rounds: ReadonlyArray<Round>, outputs: Record<Name, ReadonlyArray<Output>>) => {
  const measure = (name: Name) => {
    const mine = rounds.filter((r) => r.name === name)
    const p = percentile(mine.flatMap((r) => r.latencies))
    const total = (of: (r: Round) => number) => mine.reduce((n, r) => n + of(r), 0)
    const deliveries = total((r) => r.deliveries)
    return {
      rate: deliveries / total((r) => r.seconds), p50: p(50), p99: p(99),
      cpuMs: (total((r) => r.relayCpu) * 1000) / deliveries, databaseMs: (total((r) => r.databaseCpu) * 1000) / deliveries,
      peakRssMb: Math.max(...mine.map((r) => r.peakRssMb)), problems: mine.flatMap((r) => r.problems)
    }
  }
  const [ours, baseline] = [measure("ours"), measure("baseline")]
  log(`\nwebhook relay, ${machine()} (shared by the bench, the relays and PostgreSQL)`)
  log("deliveries/s: the bursts; p50/p99: commit-to-receipt of the steady phase; CPU: the relay processes' user+sys a delivery of the bursts; PG: PostgreSQL's")
  const cells = (values: ReadonlyArray<string>) => `  ${values[0]!.padEnd(10)}${values.slice(1).map((v) => v.padStart(13)).join("")}`
  log(cells(["relay", "deliveries/s", "p50 ms", "p99 ms", "CPU ms/deliv", "PG ms/deliv", "peak RSS MB"]))
  for (const [name, m] of [["ours", ours], ["baseline", baseline]] as const) {
    log(cells([name, f(m.rate), f(m.p50), f(m.p99), f(m.cpuMs, 3), f(m.databaseMs, 3), f(m.peakRssMb)]))
  }
  log(`  ours/baseline: throughput ${f(ours.rate / baseline.rate, 2)}x, p50 ${f(ours.p50 / baseline.p50, 2)}x, p99 ${f(ours.p99 / baseline.p99, 2)}x, CPU ${f(ours.cpuMs / baseline.cpuMs, 2)}x, PG ${f(ours.databaseMs / baseline.databaseMs, 2)}x`)
  const clean = ours.problems.length === 0 && baseline.problems.length === 0
  verdict(log, ours.rate >= BAR.deliveriesPerSecond && ours.p50 <= BAR.p50Ms && clean,
    `relay ${f(ours.rate, 0)} deliveries/s (bar >= ${BAR.deliveriesPerSecond}/s), commit-to-receipt p50 ${f(ours.p50)} ms (bar <= ${BAR.p50Ms} ms)` +
      (clean ? "; every delivery received once, signatures valid, none left pending" : " -- a round had problems (above): the run does not count"))
  const [throughput, p99] = [ours.rate / baseline.rate, ours.p99 / baseline.p99]
  verdict(log, throughput >= BAR.againstBaseline && p99 <= BAR.p99AgainstBaseline && clean,
    `ordered delivery against the baseline: throughput ${f(throughput, 2)}x (bar >= ${BAR.againstBaseline}x), p99 ${f(p99, 2)}x (bar <= ${BAR.p99AgainstBaseline}x)`)
  for (const name of ["ours", "baseline"] as const) notePrinted(log, `the ${name} relays`, outputs[name].flatMap((o) => o.first))
}
