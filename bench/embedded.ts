/**
 * `pnpm bench`'s embedded database section (BENCH_ONLY=embedded, bench/README.md "Embedded
 * database"): `chamber serve` on PGlite as an operator runs it: cold start to the first 200 on an
 * empty data directory (bar <= 5 s), idle RSS, a restart and its RSS under a little load; and
 * `serve` on PostgreSQL, its idle RSS (bar <= 160 MB).
 */
import { join } from "node:path"
import { cannon } from "./load.ts"
import { serveChamber, type Serving } from "./processes.ts"
import { f, machine, percentile, type SectionContext, sleep, verdict, withTempDir } from "./shared.ts"

const STARTS = Math.max(1, Number(process.env.BENCH_EMBEDDED_STARTS ?? 3))
const IDLE_SECONDS = Number(process.env.BENCH_EMBEDDED_IDLE ?? 5)
const LOAD_SECONDS = Number(process.env.BENCH_EMBEDDED_LOAD ?? 10)
const LOAD_CONNECTIONS = Number(process.env.BENCH_EMBEDDED_CONNECTIONS ?? 4)
const BAR = { coldStartMs: 5_000, postgresIdleRssMb: 160 }

/** `serve --demo-if-empty` on an empty data directory until GET /api/v1/me answers 200 with its key; then idle. */
const coldStart = (dir: string) =>
  serveChamber(["--demo-if-empty"], { DATABASE_URL: "", CHAMBER_DATA_DIR: join(dir, "data") }, async (server) => {
    const { base, key } = server
    if (key === undefined) throw new Error("chamber serve --demo-if-empty printed no key")
    for (;;) {
      const response = await fetch(`${base}/api/v1/me`, { headers: { authorization: `Bearer ${key}` } }).catch(() => undefined)
      await response?.arrayBuffer()
      if (response?.status === 200) break
      await sleep(10)
    }
    const firstOkMs = performance.now() - server.started
    await sleep(IDLE_SECONDS * 1000)
    return { key, firstOkMs, rss: server.rss() }
  })

/** A little load on a running server, the members page and /me in turn, its RSS sampled. */
const load = async (server: Serving, key: string) => {
  let peakRss = server.rss()
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, server.rss())), 100)
  const requests = [{ method: "GET", path: "/api/v1/members?page=1" }, { method: "GET", path: "/api/v1/me" }]
  const options = { url: server.base, connections: LOAD_CONNECTIONS, duration: LOAD_SECONDS, headers: { authorization: `Bearer ${key}` }, requests }
  const result = await cannon(options).finally(() => clearInterval(sampler))
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, bad: result.non2xx + result.errors + result.timeouts, peakRss }
}

/** `serve` until it listens, then idle: its RSS. */
const idle = async (server: Serving) => {
  await sleep(IDLE_SECONDS * 1000)
  return { listeningMs: server.listeningMs, rss: server.rss() }
}

export const benchEmbedded = (ctx: SectionContext): Promise<void> =>
  // Each cold start on a data directory of its own under one temporary directory.
  withTempDir("chamber-embedded-", async (root) => {
    const { log } = ctx
    log(`\n[${ctx.elapsed()}] embedded database: ${STARTS} cold starts, idle ${IDLE_SECONDS} s, load ${LOAD_CONNECTIONS} connections x ${LOAD_SECONDS} s`)
    const starts: Array<Awaited<ReturnType<typeof coldStart>>> = []
    for (let i = 0; i < STARTS; i++) {
      starts.push(await coldStart(join(root, String(i))))
      log(`[${ctx.elapsed()}] cold start ${i + 1}: first 200 after ${f(starts[i]!.firstOkMs, 0)} ms, then ${f(starts[i]!.rss, 0)} MB idle`)
    }
    const coldMs = percentile(starts.map((s) => s.firstOkMs))(50)
    const [restart, underLoad] = await serveChamber([], { DATABASE_URL: "", CHAMBER_DATA_DIR: join(root, String(STARTS - 1), "data") }, async (server) => {
      const restart = await idle(server)
      return [restart, await load(server, starts[starts.length - 1]!.key)] as const
    })
    const postgres = await serveChamber([], { DATABASE_URL: ctx.dbUrl }, idle)

    log(`\n${machine()}; RSS = VmRSS, idle = after ${IDLE_SECONDS} s without requests (the relay runs in the process)`)
    log(`  embedded, cold start (demo chamber made): first 200 after ${f(coldMs, 0)} ms (median of ${STARTS}), idle ${f(percentile(starts.map((s) => s.rss))(50), 0)} MB`)
    log(`  embedded, restarted on that data: listening after ${f(restart.listeningMs, 0)} ms, idle ${f(restart.rss, 0)} MB`)
    log(`  embedded under load (${LOAD_CONNECTIONS} connections, members page and /me): ${f(underLoad.rps, 0)} req/s, p50 ${f(underLoad.p50)} ms, ` +
      `p99 ${f(underLoad.p99)} ms, non-2xx/errors ${underLoad.bad}, peak ${f(underLoad.peakRss, 0)} MB`)
    log(`  PostgreSQL: listening after ${f(postgres.listeningMs, 0)} ms, idle ${f(postgres.rss, 0)} MB\n`)
    verdict(log, coldMs <= BAR.coldStartMs, `cold start to the first 200 on an empty embedded database ${f(coldMs, 0)} ms (bar <= ${BAR.coldStartMs} ms)`)
    verdict(log, postgres.rss <= BAR.postgresIdleRssMb, `idle RSS of \`chamber serve\` on PostgreSQL ${f(postgres.rss, 0)} MB (bar <= ${BAR.postgresIdleRssMb} MB)`)
  })
