/**
 * `pnpm bench`'s embedded database section (BENCH_ONLY=embedded; bench/README.md "Embedded
 * database (PGlite)"): what PGlite costs next to PostgreSQL, with `chamber serve` run as an
 * operator runs it (`node packages/cli/src/bin.ts serve`, a child process of its own).
 *
 * 1. cold start: `serve --demo-if-empty` on an empty data directory, from the spawn to the first
 *    200 of GET /api/v1/me with the key it prints; BENCH_EMBEDDED_STARTS runs, the median against
 *    the bar (<= 5 s), each broken down by the server's own debug lines (LOG_LEVEL=debug);
 * 2. idle RSS: after that start, after a restart on the same data, and of `serve` on PostgreSQL
 *    (the run's database; bar <= 120 MB);
 * 3. RSS of the restarted embedded server under a little load (BENCH_EMBEDDED_CONNECTIONS
 *    connections for BENCH_EMBEDDED_LOAD seconds on the members page and /me).
 */
import autocannon from "autocannon"
import { CHAMBER_NODE_FLAGS, type SectionContext } from "./shared.ts"
import type { ChildProcess } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { cpus, loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { procStatus, spawnNode, stopChild } from "./processes.ts"

const STARTS = Math.max(1, Number(process.env.BENCH_EMBEDDED_STARTS ?? 3))
const IDLE_SECONDS = Number(process.env.BENCH_EMBEDDED_IDLE ?? 5)
const LOAD_SECONDS = Number(process.env.BENCH_EMBEDDED_LOAD ?? 10)
const LOAD_CONNECTIONS = Number(process.env.BENCH_EMBEDDED_CONNECTIONS ?? 4)
export const EMBEDDED_BAR = { coldStartMs: 5_000, postgresIdleRssMb: 120 }

const BIN = fileURLToPath(new URL("../packages/cli/src/bin.ts", import.meta.url))
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const f = (n: number | undefined, digits = 0) => (n !== undefined && Number.isFinite(n) ? n.toFixed(digits) : "-")
const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted.length === 0 ? NaN : sorted.length % 2 === 1 ? sorted[(sorted.length - 1) / 2]! : (sorted[sorted.length / 2 - 1]! + sorted[sorted.length / 2]!) / 2
}

export type EmbeddedBenchContext = SectionContext

/**
 * One `chamber serve` child: its JSON log lines, each at its own timestamp (ms since the spawn).
 * Not when they arrive: the server writes to a pipe, and while PGlite works its lines wait.
 */
interface Serving {
  readonly child: ChildProcess
  readonly started: number
  readonly startedAt: number
  readonly seen: Map<string, { readonly at: number; readonly annotations: Record<string, unknown> }>
  readonly other: Array<string>
}

const serve = (args: ReadonlyArray<string>, env: Record<string, string>): Serving => {
  const started = performance.now()
  const startedAt = Date.now()
  const child = spawnNode([...CHAMBER_NODE_FLAGS, BIN, "serve", "--port", "0", ...args], {
    ...process.env,
    REDIS_URL: "",
    LOG_FORMAT: "json",
    LOG_LEVEL: "debug",
    NO_COLOR: "1",
    CHAMBER_RATE_LIMIT_PER_MINUTE: "1000000000",
    ...env
  })
  const serving: Serving = { child, started, startedAt, seen: new Map(), other: [] }
  let partial = ""
  child.stdout!.setEncoding("utf8")
  child.stdout!.on("data", (chunk: string) => {
    const lines = (partial + chunk).split("\n")
    partial = lines.pop()!
    for (const line of lines) {
      if (line.startsWith(`{"message":"request"`)) continue
      try {
        const entry = JSON.parse(line) as { message: string; timestamp: string; annotations?: Record<string, unknown> }
        const key = entry.message.startsWith("Chamber Data API on") ? "listening" : entry.message
        if (!serving.seen.has(key)) serving.seen.set(key, { at: Date.parse(entry.timestamp) - startedAt, annotations: entry.annotations ?? {} })
      } catch {
        if (line.trim() !== "") serving.other.push(line)
      }
    }
  })
  child.stderr!.setEncoding("utf8")
  child.stderr!.on("data", (chunk: string) => {
    for (const line of chunk.split("\n")) if (line.trim() !== "" && !line.startsWith("Creating the demo chamber")) serving.other.push(line)
  })
  return serving
}

const waitFor = async (serving: Serving, message: string, timeoutMs = 120_000) => {
  const until = performance.now() + timeoutMs
  while (!serving.seen.has(message)) {
    if (serving.child.exitCode !== null) throw new Error(`chamber serve exited (${serving.child.exitCode}): ${serving.other.slice(0, 4).join(" | ")}`)
    if (performance.now() > until) throw new Error(`chamber serve did not log "${message}" within ${timeoutMs / 1000} s`)
    await sleep(5)
  }
  return serving.seen.get(message)!
}

const baseOf = async (serving: Serving) => {
  const listening = await waitFor(serving, "listening")
  return String(listening.annotations.docs).replace(/\/docs$/, "")
}

const rss = (serving: Serving) => procStatus(serving.child.pid!, "VmRSS")

/** User + system CPU seconds of a process and of the children it has waited for (its initdb). */
const cpuWithChildren = (pid: number): number => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /, "").split(" ")
  return [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0) / 100
}

interface ColdStart {
  readonly dir: string
  readonly key: string
  readonly firstOkMs: number
  readonly cpuSeconds: number
  readonly openedAt: number
  readonly openMs: number
  readonly migrateMs: number
  readonly migratedAt: number
  readonly demoAt: number
  readonly rssIdle: number
  readonly hwm: number
}

/** `serve --demo-if-empty` on an empty data directory until GET /api/v1/me answers 200 with its key. */
const coldStart = async (): Promise<ColdStart> => {
  const dir = mkdtempSync(join(tmpdir(), "chamber-embedded-cold-"))
  const serving = serve(["--demo-if-empty"], { DATABASE_URL: "", CHAMBER_DATA_DIR: join(dir, "data") })
  try {
    const base = await baseOf(serving)
    const demo = await waitFor(serving, "Demo chamber created")
    const key = String(demo.annotations.key)
    for (;;) {
      const response = await fetch(`${base}/api/v1/me`, { headers: { authorization: `Bearer ${key}` } }).catch(() => undefined)
      await response?.arrayBuffer()
      if (response?.status === 200) break
      await sleep(10)
    }
    const firstOkMs = performance.now() - serving.started
    const cpu = cpuWithChildren(serving.child.pid!)
    await sleep(IDLE_SECONDS * 1000)
    const opened = serving.seen.get("embedded database open")
    const migrated = serving.seen.get("migrations applied")
    return {
      dir,
      key,
      firstOkMs,
      cpuSeconds: cpu,
      openedAt: opened?.at ?? NaN,
      openMs: Number(opened?.annotations.ms ?? NaN),
      migrateMs: Number(migrated?.annotations.ms ?? NaN),
      migratedAt: migrated?.at ?? NaN,
      demoAt: demo.at,
      rssIdle: rss(serving),
      hwm: procStatus(serving.child.pid!, "VmHWM")
    }
  } finally {
    await stopChild(serving.child)
  }
}

interface Load {
  readonly rps: number
  readonly p50: number
  readonly p99: number
  readonly bad: number
  readonly peakRss: number
  readonly rssAfter: number
}

/** A little load on a running server: the members page and /me, sampling its RSS. */
const load = async (serving: Serving, base: string, key: string): Promise<Load> => {
  let peakRss = rss(serving)
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, rss(serving))), 100)
  const result = await new Promise<any>((resolve, reject) =>
    autocannon(
      {
        url: base,
        connections: LOAD_CONNECTIONS,
        duration: LOAD_SECONDS,
        headers: { authorization: `Bearer ${key}` },
        requests: [{ method: "GET", path: "/api/v1/members?page=1" }, { method: "GET", path: "/api/v1/me" }]
      },
      (error: unknown, r: unknown) => (error ? reject(error) : resolve(r))
    )
  ).finally(() => clearInterval(sampler))
  await sleep(3_000)
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    bad: result.non2xx + result.errors + result.timeouts,
    peakRss,
    rssAfter: rss(serving)
  }
}

/** `serve` until it listens, then idle; its RSS. */
const idle = async (serving: Serving) => {
  const base = await baseOf(serving)
  const readyMs = performance.now() - serving.started
  await sleep(IDLE_SECONDS * 1000)
  return { base, readyMs, rss: rss(serving), hwm: procStatus(serving.child.pid!, "VmHWM") }
}

export const benchEmbedded = async (ctx: EmbeddedBenchContext): Promise<void> => {
  const { log } = ctx
  log(`\n[${ctx.elapsed()}] embedded database (PGlite): ${STARTS} cold starts, idle ${IDLE_SECONDS} s, load ${LOAD_CONNECTIONS} connections x ${LOAD_SECONDS} s`)
  log(`machine: ${cpus().length} CPUs, load average ${loadavg().map((l) => l.toFixed(1)).join(" ")}`)
  const dirs: Array<string> = []
  try {
    // 1. Cold starts.
    const starts: Array<ColdStart> = []
    for (let i = 0; i < STARTS; i++) {
      const start = await coldStart()
      dirs.push(start.dir)
      starts.push(start)
      log(`[${ctx.elapsed()}] cold start ${i + 1}: first 200 after ${f(start.firstOkMs)} ms`)
    }
    log("\ncold start to the first 200, `serve --demo-if-empty` on an empty data directory (ms since the spawn; CPU = user+sys of the server")
    log("and of its initdb child, if any; modules = until the database starts opening; PGlite open includes waiting for initdb)")
    log("run   modules  PGlite open  migrations  demo+listen  first 200  first 200 at   CPU s   RSS idle MB   VmHWM MB")
    starts.forEach((s, i) => {
      const modules = s.openedAt - s.openMs
      log(
        `${String(i + 1).padEnd(4)}  ${f(modules).padStart(7)}  ${f(s.openMs).padStart(11)}  ${f(s.migrateMs).padStart(10)}  ${f(s.demoAt - s.migratedAt).padStart(11)}  ` +
          `${f(s.firstOkMs - s.demoAt).padStart(9)}  ${f(s.firstOkMs).padStart(12)}  ${f(s.cpuSeconds, 2).padStart(6)}  ${f(s.rssIdle).padStart(12)}  ${f(s.hwm).padStart(9)}`
      )
    })
    const coldMs = median(starts.map((s) => s.firstOkMs))

    // 2 and 3. A restart on the last cold start's data, idle, then under load.
    const last = starts[starts.length - 1]!
    const restarted = serve([], { DATABASE_URL: "", CHAMBER_DATA_DIR: join(last.dir, "data"), LOG_LEVEL: "info" })
    let restartIdle, underLoad
    try {
      restartIdle = await idle(restarted)
      underLoad = await load(restarted, restartIdle.base, last.key)
    } finally {
      await stopChild(restarted.child)
    }
    const onPostgres = serve([], { DATABASE_URL: ctx.dbUrl, LOG_LEVEL: "info" })
    let postgresIdle
    try {
      postgresIdle = await idle(onPostgres)
    } finally {
      await stopChild(onPostgres.child)
    }
    log(`\nidle RSS of \`chamber serve\` (VmRSS after ${IDLE_SECONDS} s idle; the relay runs in it)`)
    log(`  embedded, after the cold start (demo chamber created): ${f(median(starts.map((s) => s.rssIdle)))} MB (median; VmHWM ${f(median(starts.map((s) => s.hwm)))} MB)`)
    log(`  embedded, restarted on that data: ${f(restartIdle.rss)} MB (VmHWM ${f(restartIdle.hwm)} MB; listening after ${f(restartIdle.readyMs)} ms)`)
    log(`  PostgreSQL: ${f(postgresIdle.rss)} MB (VmHWM ${f(postgresIdle.hwm)} MB; listening after ${f(postgresIdle.readyMs)} ms)`)
    log(
      `\nembedded under load (${LOAD_CONNECTIONS} connections, ${LOAD_SECONDS} s, members page 1 and /me): ${f(underLoad.rps)} req/s, ` +
        `p50 ${f(underLoad.p50, 1)} ms, p99 ${f(underLoad.p99, 1)} ms, non-2xx/errors ${underLoad.bad}; ` +
        `RSS peak ${f(underLoad.peakRss)} MB, ${f(underLoad.rssAfter)} MB 3 s after`
    )

    log("")
    log(
      `${coldMs <= EMBEDDED_BAR.coldStartMs ? "PASS" : "FAIL"}: cold start to the first 200 on an empty embedded database ${f(coldMs)} ms ` +
        `(median of ${STARTS}; bar <= ${EMBEDDED_BAR.coldStartMs} ms)`
    )
    log(
      `${postgresIdle.rss <= EMBEDDED_BAR.postgresIdleRssMb ? "PASS" : "FAIL"}: idle RSS of \`chamber serve\` on PostgreSQL ${f(postgresIdle.rss)} MB ` +
        `(bar <= ${EMBEDDED_BAR.postgresIdleRssMb} MB)`
    )
  } finally {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  }
}
