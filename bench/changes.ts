/**
 * `pnpm bench`'s change feed section (BENCH_ONLY=changes): does the feed serve 100 events as fast
 * as the members list serves a page of 100 members? One chamber of BENCH_CHANGES_MEMBERS members
 * made through the core services (each fired `member.created`, whose `data` is the member as GET
 * returns it, so both answers carry 100 equal resources). Our server (our-server.ts) then answers
 * `GET /api/v1/changes` (the first 100 events, read through a cursor) and `GET /api/v1/members?page=1`
 * in rounds taken in turn, BENCH_CONNECTIONS connections, after a warm-up of each. Bar: the feed's
 * throughput at least the members page's (>= 1.0x).
 */
import { cpus, loadavg } from "node:os"
import { fileURLToPath } from "node:url"
import autocannon from "autocannon"
import * as Effect from "effect/Effect"
import { Keys, Members, Tenants } from "../packages/core/src/index.ts"
import { StorageLive } from "../packages/pg-adapter/src/index.ts"
import { cpuSeconds, startNode, stopChild } from "./processes.ts"
import { memberInputs } from "./seed-data.ts"
import { CHAMBER_NODE_FLAGS, f, LISTENING, percentile, POOL_SIZE, type SectionContext } from "./shared.ts"

const MEMBERS = Number(process.env.BENCH_CHANGES_MEMBERS ?? 1_000)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32)
const DURATION = Number(process.env.BENCH_DURATION ?? 10)
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 2))
const WARMUP = Number(process.env.BENCH_WARMUP ?? 4)
const BAR = 1

const ourServer = fileURLToPath(new URL("./our-server.ts", import.meta.url))

const seed = Effect.gen(function*() {
  const tenant = yield* (yield* Tenants).create({ name: "Feed Bench Chamber", website: "https://feed-bench.example" })
  yield* (yield* Tenants).addUser(tenant.id, "admin@feed-bench.example", "chamber_admin")
  const members = yield* Members
  yield* Effect.forEach(memberInputs(MEMBERS), (input) => members.create(tenant.id, input), { concurrency: 8, discard: true })
  const minted = yield* (yield* Keys).mint({ tenant: tenant.id, asEmail: "admin@feed-bench.example", name: "Feed reader", scopes: "read", dailyLimit: 2_000_000_000 })
  return minted.key
}).pipe(Effect.orDie)

interface Tally {
  readonly name: string
  readonly path: string
  readonly latencies: Array<number>
  ok: number
  bad: number
  seconds: number
  cpu: number
}

const round = (base: string, key: string, tally: Tally, seconds: number, pid: number, measured: boolean) =>
  new Promise<number>((resolve, reject) => {
    const cpuBefore = cpuSeconds(pid)
    const okBefore = tally.ok
    const instance = autocannon(
      { url: `${base}${tally.path}`, connections: CONNECTIONS, duration: seconds, headers: { authorization: `Bearer ${key}` } },
      (error: unknown, result: any) => {
        if (error) return reject(error)
        if (!measured) return resolve(0)
        tally.cpu += cpuSeconds(pid) - cpuBefore
        tally.bad += result.non2xx + result.errors + result.timeouts
        tally.seconds += result.duration
        resolve((tally.ok - okBefore) / result.duration)
      }
    )
    if (measured) {
      instance.on("response", (_client: unknown, status: number, _bytes: number, time: number) => {
        if (status < 200 || status >= 300) return
        tally.ok++
        tally.latencies.push(time)
      })
    }
  })

export const benchChanges = async (ctx: SectionContext): Promise<void> => {
  const { elapsed, log } = ctx
  log(`\nchange feed: ${MEMBERS} members (one member.created each), ${CONNECTIONS} connections, warm-up ${WARMUP} s + ${DURATION} s per endpoint in ${ROUNDS} rounds`)
  const key = await Effect.runPromise(Effect.scoped(seed.pipe(Effect.provide(StorageLive({ _tag: "Postgres", url: ctx.dbUrl, maxConnections: 10 })))))
  const { child, match } = await startNode("ours", [...CHAMBER_NODE_FLAGS, ourServer], {
    ...process.env,
    DATABASE_URL: ctx.dbUrl,
    BENCH_POOL_SIZE: String(POOL_SIZE),
    CHAMBER_RATE_LIMIT_PER_MINUTE: "1000000000",
    NODE_ENV: "production"
  }, new RegExp(`^${LISTENING} (\\d+)`))
  const base = `http://127.0.0.1:${match[1]}`
  try {
    // The feed read from a cursor: the first page's, so that each request reads 100 events after it.
    const first = await (await fetch(`${base}/api/v1/changes`, { headers: { authorization: `Bearer ${key}` } })).json() as any
    if (first.data?.length !== 100) throw new Error(`change feed bench: the feed did not answer 100 events: ${JSON.stringify(first).slice(0, 200)}`)
    const members = await (await fetch(`${base}/api/v1/members?page=1`, { headers: { authorization: `Bearer ${key}` } })).json() as any
    if (members.data?.length !== 100) throw new Error("change feed bench: the members page did not answer 100 members")
    const cursorPath = `/api/v1/changes?after=${encodeURIComponent(first.meta.next_cursor)}`
    const tallies: Array<Tally> = [
      { name: "changes", path: cursorPath, latencies: [], ok: 0, bad: 0, seconds: 0, cpu: 0 },
      { name: "members", path: "/api/v1/members?page=1", latencies: [], ok: 0, bad: 0, seconds: 0, cpu: 0 }
    ]
    for (const tally of tallies) await round(base, key, tally, WARMUP, child.pid!, false)
    for (let r = 1; r <= ROUNDS; r++) {
      for (const tally of tallies) {
        const rate = await round(base, key, tally, DURATION / ROUNDS, child.pid!, true)
        log(`[${elapsed()}] changes round ${r}/${ROUNDS} ${tally.name}: ${f(rate)} req/s`)
      }
    }
    log(`\n=== change feed: ${cpus().length} CPUs, load average ${loadavg().map((l) => f(l)).join(" ")} ===`)
    log(`  ${"endpoint".padEnd(34)}${["req/s", "p50 ms", "p99 ms", "CPU ms/req", "non-2xx/err"].map((h) => h.padStart(12)).join("")}`)
    for (const t of tallies) {
      const pct = percentile(t.latencies)
      log(`  ${`GET ${t.path.replace(/after=[^&]+/, "after=<cursor>")}`.padEnd(34)}${[f(t.ok / t.seconds), f(pct(50)), f(pct(99)), f((t.cpu * 1000) / t.ok, 3), String(t.bad)].map((v) => v.padStart(12)).join("")}`)
    }
    const [feed, page] = tallies as [Tally, Tally]
    const ratio = (feed.ok / feed.seconds) / (page.ok / page.seconds)
    const clean = feed.bad === 0 && page.bad === 0
    log(
      `${ratio >= BAR && clean ? "PASS" : "FAIL"}: the change feed serves 100 events at ${f(ratio, 2)}x the members page's throughput (bar >= ${BAR}x)` +
        (clean ? "" : " -- some requests failed: the run does not count")
    )
  } finally {
    await stopChild(child)
  }
}
