/**
 * `BENCH_ONLY=fair pnpm bench` (bench/README.md "Fair delivery"): chamber A's receivers hold every
 * request unanswered for BENCH_FAIR_HANG s under a burst, then answer; chamber B sends one event a
 * second throughout. Bars: B's commit-to-receipt p99 <= 1 s while A's receivers hang and while
 * A's backlog drains; every one of A's deliveries succeeded, each of B's received once.
 */
import type { ChildProcess } from "node:child_process"
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
import pg from "pg"
import { AllowPrivateDestinations, Hooks, Tenants } from "../packages/core/src/index.ts"
import { StorageLive } from "../packages/pg-adapter/src/index.ts"
import { type Output, stopChild } from "./processes.ts"
import { startBenchReceiver } from "./relay-receiver.ts"
import { commitEvents, type PlannedEvent, relayEnv, startOurRelay } from "./relay-work.ts"
import { f, machine, notePrinted, percentile, type SectionContext, sleep, verdict } from "./shared.ts"

const HOOKS = Number(process.env.BENCH_FAIR_HOOKS ?? 40)
const RECEIVERS = Math.max(1, Number(process.env.BENCH_FAIR_RECEIVERS ?? 10))
const EVENTS = Number(process.env.BENCH_FAIR_EVENTS ?? 1_000)
const HANG_SECONDS = Number(process.env.BENCH_FAIR_HANG ?? 30)
const TIMEOUT_SECONDS = Number(process.env.BENCH_FAIR_TIMEOUT ?? 300)
const PROCESSES = 2
const BAR = { p99Ms: 1_000 }
const SECRET_KEY = "fair bench secret key"

const memberEvent = (id: number, fanout: number): PlannedEvent => ({
  type: "member.created",
  data: { id, attributes: { name: `Member ${id}`, status: "active" }, created_at: "2026-11-01T09:00:00.000Z", updated_at: "2026-11-01T09:00:00.000Z" },
  fanout
})

export const benchFair = async (ctx: SectionContext): Promise<void> => {
  const { log } = ctx
  process.env.CHAMBER_SECRET_KEY = SECRET_KEY
  const runtime = ManagedRuntime.make(StorageLive({ _tag: "Postgres", url: ctx.dbUrl, maxConnections: 10 }))
  const db = new pg.Client({ connectionString: ctx.dbUrl })
  const steady = await startBenchReceiver()
  const hanging = await Promise.all(Array.from({ length: RECEIVERS }, () => startBenchReceiver(true)))
  const relays: Array<ChildProcess> = []
  const outputs: Array<Output> = []
  try {
    await runtime.runPromise(Effect.void)
    await db.connect()
    const { a, b } = await runtime.runPromise(Effect.gen(function*() {
      const tenants = yield* Tenants
      const hooks = yield* Hooks
      const a = yield* tenants.create({ name: "Fair Bench A (receivers that hang)" })
      const b = yield* tenants.create({ name: "Fair Bench B" })
      for (let i = 0; i < HOOKS; i++) yield* hooks.create(a.id, { url: `${hanging[i % RECEIVERS]!.url}/a/${i}`, events: ["member.created"] })
      yield* hooks.create(b.id, { url: `${steady.url}/b`, events: ["member.created"] })
      return { a: a.id, b: b.id }
    }).pipe(Effect.provideService(AllowPrivateDestinations, true), Effect.orDie))
    log(
      `\nfair delivery: ${PROCESSES} relays (defaults: 128 sends each, a chamber's share 25%, 10 s attempts; retries after 5 s); chamber A: ` +
        `${HOOKS} subscriptions over ${RECEIVERS} receivers that never answer, a burst of ${EVENTS} events (${EVENTS * HOOKS} deliveries); ` +
        `chamber B: one event a second; A's receivers answer after ${HANG_SECONDS} s`
    )

    const env = relayEnv(ctx.dbUrl, steady.ca, { CHAMBER_WEBHOOK_RETRY_DELAYS: "5s,5s,5s" })
    for (let i = 0; i < PROCESSES; i++) {
      const { child, output } = await startOurRelay(env)
      relays.push(child)
      outputs.push(output)
    }
    await sleep(500)

    // B: one event a second, from now until the end; each commit's moment kept by event id.
    const committed = new Map<string, number>()
    const phaseOf = new Map<string, "hang" | "drain">()
    let phase: "hang" | "drain" = "hang"
    let writing = true
    let n = 0
    const commits: Array<Promise<void>> = []
    const writer = (async () => {
      const t0 = performance.now()
      while (writing) {
        const current = phase
        commits.push(runtime.runPromise(commitEvents(b, [memberEvent(900_000 + n, 1)])).then(({ committedAt, ids }) => {
          committed.set(ids[0]!, committedAt)
          phaseOf.set(ids[0]!, current)
        }))
        n++
        const wait = t0 + n * 1000 - performance.now()
        if (wait > 0) await sleep(wait)
      }
    })()

    const burstAt = performance.now()
    await runtime.runPromise(commitEvents(a, Array.from({ length: EVENTS }, (_, i) => memberEvent(10_000 + i, HOOKS))))
    log(`[${ctx.elapsed()}] fair: A's burst committed in ${f((performance.now() - burstAt) / 1000)} s`)
    await sleep(Math.max(0, HANG_SECONDS * 1000 - (performance.now() - burstAt)))
    const hangRequests = hanging.reduce((k, r) => k + r.receipts.length, 0)
    phase = "drain"
    const answerAt = performance.now()
    for (const r of hanging) r.answer()

    const states = async () =>
      (await db.query(`SELECT status, count(*)::int AS n FROM webhook_deliveries WHERE tenant_id = $1 GROUP BY status`, [a])).rows as Array<{ status: string; n: number }>
    let done = false
    let last: Array<{ status: string; n: number }> = []
    while (performance.now() - answerAt < TIMEOUT_SECONDS * 1000) {
      last = await states()
      if (last.every((r) => r.status !== "pending")) {
        done = true
        break
      }
      await sleep(250)
    }
    const drainSeconds = (performance.now() - answerAt) / 1000
    await sleep(2_000)
    writing = false
    await writer
    await Promise.all(commits)
    await steady.waitFor(committed.size, 30_000).catch(() => {})

    const receipts = new Map<string, number>()
    const seen = new Map<string, number>()
    for (const r of steady.receipts) {
      seen.set(r.event, (seen.get(r.event) ?? 0) + 1)
      if (!receipts.has(r.event)) receipts.set(r.event, r.at)
    }
    const latencies = (which: "hang" | "drain") =>
      [...committed].filter(([id]) => phaseOf.get(id) === which).map(([id, at]) => (receipts.get(id) ?? Infinity) - at)
    const [hang, drain] = [latencies("hang"), latencies("drain")]
    const [ph, pd] = [percentile(hang), percentile(drain)]
    const succeeded = last.find((r) => r.status === "succeeded")?.n ?? 0
    const failed = last.find((r) => r.status === "failed")?.n ?? 0
    const problems: Array<string> = []
    if (!done) problems.push(`A's deliveries not all settled within ${TIMEOUT_SECONDS} s: ${last.map((r) => `${r.n} ${r.status}`).join(", ")}`)
    if (failed > 0) problems.push(`${failed} of A's deliveries failed`)
    const missing = [...committed.keys()].filter((id) => !receipts.has(id)).length
    if (missing > 0) problems.push(`${missing} of B's deliveries never received`)
    const twice = [...seen.values()].filter((k) => k > 1).length
    if (twice > 0) problems.push(`${twice} of B's deliveries received more than once`)

    log(`\nfair delivery, ${machine()} (shared by the bench, the relays and PostgreSQL)`)
    log(`  B while A's receivers hang (${hang.length} events): commit-to-receipt p50 ${f(ph(50))} ms, p99 ${f(ph(99))} ms, max ${f(ph(100))} ms`)
    log(`  B while A's backlog drains (${drain.length} events): commit-to-receipt p50 ${f(pd(50))} ms, p99 ${f(pd(99))} ms, max ${f(pd(100))} ms`)
    log(`  A: ${hangRequests} requests reached its receivers while they hung; ${succeeded} of ${EVENTS * HOOKS} deliveries succeeded ${f(drainSeconds)} s after they began answering`)
    const p99 = Math.max(ph(99), pd(99))
    verdict(
      log,
      p99 <= BAR.p99Ms && problems.length === 0,
      `B's commit-to-receipt p99 ${f(p99)} ms throughout (bar <= ${BAR.p99Ms} ms); ` +
        (problems.length === 0 ? `A's ${succeeded} deliveries all succeeded once its receivers answered` : `PROBLEMS: ${problems.join("; ")}`)
    )
    notePrinted(log, "the relays", outputs.flatMap((o) => o.first))
  } finally {
    await Promise.all(relays.map((r) => stopChild(r)))
    await Promise.all([steady.close(), ...hanging.map((r) => r.close())])
    await db.end().catch(() => {})
    await runtime.dispose()
  }
}
