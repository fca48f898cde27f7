/**
 * `BENCH_ONLY=fair pnpm bench` (bench/README.md "Fair delivery"): chamber A's receivers hold every
 * request unanswered for BENCH_FAIR_HANG s under a burst, then answer; chamber B sends one event a
 * second throughout. Bars: B's commit-to-receipt p99 <= 1 s while A's receivers hang and while
 * A's backlog drains; every one of A's deliveries succeeded, each of B's received once.
 */
import type { ChildProcess } from "node:child_process"
import { type Output, stopChild } from "./processes.ts"
import { startBenchReceiver } from "./relay-receiver.ts"
import { commitEvents, commitPaced, type PlannedEvent, relayEnv, relayRuntime, setupChamber, startOurRelay, startRelays } from "./relay-work.ts"
import { f, machine, notePrinted, percentile, type SectionContext, sleep, verdict } from "./shared.ts"

const HOOKS = Number(process.env.BENCH_FAIR_HOOKS ?? 40)
const RECEIVERS = Math.max(1, Number(process.env.BENCH_FAIR_RECEIVERS ?? 10))
const EVENTS = Number(process.env.BENCH_FAIR_EVENTS ?? 1_000)
const HANG_SECONDS = Number(process.env.BENCH_FAIR_HANG ?? 30)
const TIMEOUT_SECONDS = Number(process.env.BENCH_FAIR_TIMEOUT ?? 300)
const PROCESSES = 2
const BAR = { p99Ms: 1_000 }

const memberEvent = (id: number, fanout: number): PlannedEvent => ({
  type: "member.created",
  data: { id, attributes: { name: `Member ${id}`, status: "active" }, created_at: "2026-11-01T09:00:00.000Z", updated_at: "2026-11-01T09:00:00.000Z" },
  fanout
})

type Phase = "hang" | "drain"

export const benchFair = async (ctx: SectionContext): Promise<void> => {
  const { db, log } = ctx
  const runtime = relayRuntime(ctx.dbUrl, "fair bench secret key")
  const steady = await startBenchReceiver()
  const hanging = await Promise.all(Array.from({ length: RECEIVERS }, () => startBenchReceiver(true)))
  let relays: Array<ChildProcess> = []
  const outputs: Array<Output> = []
  try {
    const a = (await runtime.runPromise(setupChamber("Fair Bench A (receivers that hang)", HOOKS, (i) => hanging[i % RECEIVERS]!.url, ["member.created"]))).tenantId
    const b = (await runtime.runPromise(setupChamber("Fair Bench B", 1, () => steady.url, ["member.created"]))).tenantId
    log(
      `\nfair delivery: ${PROCESSES} relays (defaults: 128 sends each, a chamber's share 25%, 10 s attempts; retries after 5 s); chamber A: ` +
        `${HOOKS} subscriptions over ${RECEIVERS} receivers that never answer, a burst of ${EVENTS} events (${EVENTS * HOOKS} deliveries); ` +
        `chamber B: one event a second; A's receivers answer after ${HANG_SECONDS} s`
    )
    const env = relayEnv(ctx.dbUrl, steady.ca, { CHAMBER_WEBHOOK_RETRY_DELAYS: "5s,5s,5s" })
    relays = await startRelays(PROCESSES, () => startOurRelay(env), outputs)

    // B: one event a second, from now until the end; each commit's moment and phase kept by event id.
    const committed = new Map<string, readonly [number, Phase]>()
    const phases: Array<Phase> = []
    let phase: Phase | undefined = "hang"
    const writer = commitPaced((events) => runtime.runPromise(commitEvents(b, events)), 1000, (i) => {
      if (phase === undefined) return undefined
      phases[i] = phase
      return memberEvent(900_000 + i, 1)
    }, (id, at, i) => void committed.set(id, [at, phases[i]!]))

    const burstAt = performance.now()
    await runtime.runPromise(commitEvents(a, Array.from({ length: EVENTS }, (_, i) => memberEvent(10_000 + i, HOOKS))))
    log(`[${ctx.elapsed()}] fair: A's burst committed in ${f((performance.now() - burstAt) / 1000)} s`)
    await sleep(Math.max(0, HANG_SECONDS * 1000 - (performance.now() - burstAt)))
    const hangRequests = hanging.reduce((k, r) => k + r.receipts.length, 0)
    phase = "drain"
    const answerAt = performance.now()
    for (const r of hanging) r.answer()

    let last: Array<{ status: string; n: number }> = []
    let done = false
    while (!done && performance.now() - answerAt < TIMEOUT_SECONDS * 1000) {
      last = (await db.query(`SELECT status, count(*)::int AS n FROM webhook_deliveries WHERE tenant_id = $1 GROUP BY status`, [a])).rows
      done = last.every((r) => r.status !== "pending")
      if (!done) await sleep(250)
    }
    const drainSeconds = (performance.now() - answerAt) / 1000
    await sleep(2_000)
    phase = undefined
    await writer
    await steady.waitFor(committed.size, 30_000).catch(() => {})

    const [receipts, seen] = [new Map<string, number>(), new Map<string, number>()]
    for (const r of steady.receipts) {
      seen.set(r.event, (seen.get(r.event) ?? 0) + 1)
      if (!receipts.has(r.event)) receipts.set(r.event, r.at)
    }
    const latencies = (which: Phase) => [...committed].filter(([, [, p]]) => p === which).map(([id, [at]]) => (receipts.get(id) ?? Infinity) - at)
    const [hang, drain] = [latencies("hang"), latencies("drain")]
    const [ph, pd] = [percentile(hang), percentile(drain)]
    const count = (status: string) => last.find((r) => r.status === status)?.n ?? 0
    const [succeeded, failed] = [count("succeeded"), count("failed")]
    const missing = [...committed.keys()].filter((id) => !receipts.has(id)).length
    const twice = [...seen.values()].filter((k) => k > 1).length
    const problems = [
      ...(done ? [] : [`A's deliveries not all settled within ${TIMEOUT_SECONDS} s: ${last.map((r) => `${r.n} ${r.status}`).join(", ")}`]),
      ...(failed > 0 ? [`${failed} of A's deliveries failed`] : []),
      ...(missing > 0 ? [`${missing} of B's deliveries never received`] : []),
      ...(twice > 0 ? [`${twice} of B's deliveries received more than once`] : [])
    ]

    log(`\nfair delivery, ${machine()} (shared by the bench, the relays and PostgreSQL)`)
    for (const [what, values, p] of [["hang", hang, ph], ["backlog drains", drain, pd]] as const) {
      log(`  B while A's ${what === "hang" ? "receivers hang" : what} (${values.length} events): commit-to-receipt p50 ${f(p(50))} ms, p99 ${f(p(99))} ms, max ${f(p(100))} ms`)
    }
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
    await runtime.dispose()
  }
}
