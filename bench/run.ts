/**
 * `pnpm bench`: our HTTP server against a minimal node:http + pg baseline, on PostgreSQL.
 *
 * 1. creates a fresh database `chamber_bench_<random>` on DATABASE_URL's server (dropped at the end);
 * 2. seeds one chamber through the core services: custom field definitions, BENCH_MEMBERS members
 *    with varied fields, and a read key;
 * 3. starts both servers as child processes (so each one's RSS is its own), same DB pool size;
 * 4. checks once that both answer the measured requests with the same JSON, and stops if not;
 * 5. per endpoint: a warm-up of each, then BENCH_DURATION seconds of measurement each, cut into
 *    BENCH_ROUNDS rounds run alternately (ours, baseline, ours, baseline...) so both see the same
 *    machine conditions; autocannon at BENCH_CONNECTIONS connections;
 * 6. prints req/s, p50/p99 latency (over every response of every round), server CPU per request,
 *    peak RSS, the ratios ours/baseline and the PASS/FAIL verdict (members: throughput >= 0.5x
 *    baseline and p99 <= 1.5x baseline). Exits 0 either way; 1 only if the bench itself broke
 *    (e.g. the servers disagree).
 *
 * Knobs (env): DATABASE_URL, BENCH_MEMBERS (1000), BENCH_CONNECTIONS (32), BENCH_DURATION (10 s),
 * BENCH_ROUNDS (2), BENCH_WARMUP (4 s), BENCH_POOL_SIZE (10), BENCH_ONLY=members|me (one endpoint),
 * BENCH_PROFILE=1 (run our server under --cpu-prof, profile written to bench/profiles/ when it
 * exits; summarise it with bench/profile-summary.ts).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdirSync, readFileSync } from "node:fs"
import { cpus, tmpdir } from "node:os"
import { join } from "node:path"
import { isDeepStrictEqual } from "node:util"
import { fileURLToPath } from "node:url"
import autocannon from "autocannon"
import { Effect } from "effect"
import pg from "pg"
import { Keys, Members, Tenants } from "../packages/core/src/index.ts"
import { StorageLive } from "../packages/pg-adapter/src/index.ts"
import { LISTENING, POOL_SIZE } from "./shared.ts"
import { memberInputs } from "./seed-data.ts"

const SERVER_URL = process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres"
const MEMBERS = Number(process.env.BENCH_MEMBERS ?? 1000)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32)
const DURATION = Number(process.env.BENCH_DURATION ?? 10)
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 2))
const WARMUP = Number(process.env.BENCH_WARMUP ?? 4)
const PROFILE = process.env.BENCH_PROFILE === "1"
const ONLY = process.env.BENCH_ONLY || undefined
const BAR = { throughput: 0.5, p99: 1.5, accessLogCost: 0.05 }

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url))
const log = (line: string) => console.log(line)
const started = Date.now()
const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1)}s`

// ---------------------------------------------------------------------------------------------
// Database: a fresh one, dropped at the end whatever happens.

const dbName = `chamber_bench_${Date.now().toString(36)}_${randomBytes(3).toString("hex")}`
const dbUrl = (() => {
  const u = new URL(SERVER_URL)
  u.pathname = `/${dbName}`
  return u.toString()
})()

const admin = async <A>(f: (client: pg.Client) => Promise<A>): Promise<A> => {
  const client = new pg.Client({ connectionString: SERVER_URL })
  await client.connect()
  try {
    return await f(client)
  } finally {
    await client.end()
  }
}

let dbCreated = false
const children: Array<ChildProcess> = []

const stopChild = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    const timer = setTimeout(() => child.kill("SIGKILL"), 5_000)
    child.once("exit", () => {
      clearTimeout(timer)
      resolve()
    })
    child.kill("SIGTERM")
  })

let cleaning: Promise<void> | undefined
const cleanup = () =>
  (cleaning ??= (async () => {
    await Promise.all(children.map(stopChild))
    if (dbCreated) {
      await admin((c) => c.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`)).then(
        () => log(`dropped database ${dbName}`),
        (e) => console.error(`could not drop database ${dbName}: ${e}`)
      )
    }
  })())

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    console.error(`\n${signal}: cleaning up`)
    cleanup().finally(() => process.exit(130))
  })
}

// ---------------------------------------------------------------------------------------------
// Seeding through the core services (migrations run as StorageLive builds).

const seed = Effect.gen(function*() {
  const tenants = yield* Tenants
  const keys = yield* Keys
  const members = yield* Members
  const tenant = yield* tenants.create({ name: "Greater Riverside Chamber of Commerce", website: "https://riverside-chamber.example" })
  yield* tenants.addUser(tenant.id, "admin@riverside-chamber.example", "chamber_admin")
  // Two fields the API shows, one it hides: the list's custom-fields subquery has real work.
  yield* tenants.addField(tenant.id, { resource: "member", key: "membership_level", label: "Membership level", api_visible: true })
  yield* tenants.addField(tenant.id, { resource: "member", key: "board_member", label: "Board member", api_visible: true })
  yield* tenants.addField(tenant.id, { resource: "member", key: "internal_notes", label: "Internal notes", api_visible: false })
  yield* Effect.forEach(memberInputs(MEMBERS), (input) => members.create(tenant.id, input), { concurrency: 8, discard: true })
  const minted = yield* keys.mint({
    tenant: tenant.id,
    asEmail: "admin@riverside-chamber.example",
    name: "Website directory",
    scopes: "read",
    // Far above what a run sends, should a daily quota be enforced one day.
    dailyLimit: 2_000_000_000
  })
  return minted.key
}).pipe(Effect.orDie)

// ---------------------------------------------------------------------------------------------
// Servers as children.

interface Server {
  readonly name: "ours" | "ours+log" | "baseline"
  readonly child: ChildProcess
  readonly base: string
  /** What the server printed (logs, errors): kept out of the report, summarised at the end. */
  readonly output: { lines: number; first: Array<string> }
}

const startServer = (name: Server["name"], file: string, nodeArgs: ReadonlyArray<string> = [], extraEnv: Record<string, string> = {}) =>
  new Promise<Server>((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeArgs, here(file)], {
      env: {
        ...process.env,
        ...extraEnv,
        DATABASE_URL: dbUrl,
        BENCH_POOL_SIZE: String(POOL_SIZE),
        // Rate limiting is not implemented yet; when it is, it must not shape the measurement.
        CHAMBER_RATE_LIMIT_PER_MINUTE: "1000000000",
        NODE_ENV: "production"
      },
      stdio: ["ignore", "pipe", "pipe"]
    })
    children.push(child)
    const output = { lines: 0, first: [] as Array<string> }
    child.stderr!.setEncoding("utf8")
    child.stderr!.on("data", (chunk: string) => {
      for (const line of chunk.split("\n")) {
        if (line.trim() === "") continue
        output.lines++
        if (output.first.length < 8) output.first.push(line)
      }
    })
    const timer = setTimeout(() => reject(new Error(`${name} server did not start within 60 s`)), 60_000)
    let listening = false
    child.stdout!.setEncoding("utf8")
    child.stdout!.on("data", (chunk: string) => {
      for (const line of chunk.split("\n")) {
        if (line.trim() === "") continue
        const match = line.match(new RegExp(`^${LISTENING} (\\d+)`))
        if (match !== null && !listening) {
          listening = true
          clearTimeout(timer)
          resolve({ name, child, base: `http://127.0.0.1:${match[1]}`, output })
          continue
        }
        output.lines++
        if (output.first.length < 8) output.first.push(line)
      }
    })
    child.once("exit", (code, signal) => {
      clearTimeout(timer)
      reject(new Error(`${name} server exited early (code ${code}, signal ${signal})\n${output.first.join("\n")}`))
    })
  })

const procStatus = (pid: number, field: "VmRSS" | "VmHWM"): number => {
  try {
    const match = readFileSync(`/proc/${pid}/status`, "utf8").match(new RegExp(`${field}:\\s+(\\d+) kB`))
    return match === null ? NaN : Number(match[1]) / 1024
  } catch {
    return NaN
  }
}

/** User + system CPU seconds the process has used so far (/proc/<pid>/stat, 100 ticks a second). */
const cpuSeconds = (pid: number): number => {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /, "").split(" ")
    // After the command name: state is field 3, utime field 14, stime field 15 (1-based, man 5 proc).
    return (Number(fields[11]) + Number(fields[12])) / 100
  } catch {
    return NaN
  }
}

// ---------------------------------------------------------------------------------------------
// Load.

interface Endpoint {
  readonly name: string
  readonly path: string
}

const ALL_ENDPOINTS: ReadonlyArray<Endpoint & { readonly id: string }> = [
  { id: "members", name: "GET /api/v1/members (page 1)", path: "/api/v1/members?page=1" },
  { id: "me", name: "GET /api/v1/me", path: "/api/v1/me" }
]
/** BENCH_ONLY=members (or me) measures one endpoint, e.g. to profile it alone. */
const ENDPOINTS = ALL_ENDPOINTS.filter((e) => ONLY === undefined || e.id === ONLY)

interface Measured {
  readonly rps: number
  readonly p50: number
  readonly p99: number
  readonly cpuMsPerRequest: number
  readonly peakRssMb: number
  readonly requests: number
  readonly bad: number
  readonly kbPerResponse: number
}

/** One autocannon run; `latencies` collects every 2xx response time (ms) when given. */
const fire = (url: string, key: string, seconds: number, latencies?: Array<number>) =>
  new Promise<any>((resolve, reject) => {
    const instance = autocannon(
      { url, connections: CONNECTIONS, duration: seconds, headers: { authorization: `Bearer ${key}` } },
      (error: unknown, result: any) => (error ? reject(error) : resolve(result))
    )
    if (latencies !== undefined) {
      instance.on("response", (_client: unknown, status: number, _bytes: number, time: number) => {
        if (status >= 200 && status < 300) latencies.push(time)
      })
    }
  })

/** Accumulates one server's rounds on one endpoint. */
class Tally {
  readonly latencies: Array<number> = []
  ok = 0
  requests = 0
  bad = 0
  bytes = 0
  seconds = 0
  cpu = 0
  peakRssMb = 0

  readonly server: Server

  constructor(server: Server) {
    this.server = server
  }

  async round(endpoint: Endpoint, key: string, seconds: number) {
    const pid = this.server.child.pid!
    const sample = () => {
      const rss = procStatus(pid, "VmRSS")
      if (rss > this.peakRssMb) this.peakRssMb = rss
    }
    sample()
    const sampler = setInterval(sample, 100)
    const cpuBefore = cpuSeconds(pid)
    try {
      const r = await fire(this.server.base + endpoint.path, key, seconds, this.latencies)
      this.cpu += cpuSeconds(pid) - cpuBefore
      this.ok += r["2xx"]
      this.requests += r.requests.total
      this.bad += r.non2xx + r.errors + r.timeouts
      this.bytes += r.throughput.total
      this.seconds += r.duration
      sample()
    } finally {
      clearInterval(sampler)
    }
  }

  result(): Measured {
    const sorted = Float64Array.from(this.latencies).sort()
    const pct = (p: number) => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!)
    return {
      rps: this.ok / this.seconds,
      p50: pct(50),
      p99: pct(99),
      cpuMsPerRequest: this.ok > 0 ? (this.cpu * 1000) / this.ok : NaN,
      peakRssMb: this.peakRssMb,
      requests: this.requests,
      bad: this.bad,
      kbPerResponse: this.ok > 0 ? this.bytes / this.ok / 1024 : 0
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Same answers before measuring anything.

const get = async (base: string, path: string, key: string) => {
  const response = await fetch(base + path, { headers: { authorization: `Bearer ${key}` } })
  return { status: response.status, text: await response.text() }
}

const firstDifference = (a: unknown, b: unknown, path = "$"): string | undefined => {
  if (isDeepStrictEqual(a, b)) return undefined
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null || Array.isArray(a) !== Array.isArray(b)) {
    return `${path}: ours ${JSON.stringify(a)?.slice(0, 200)} vs baseline ${JSON.stringify(b)?.slice(0, 200)}`
  }
  const keys = new Set([...Object.keys(a), ...Object.keys(b)])
  for (const k of keys) {
    const d = firstDifference((a as any)[k], (b as any)[k], `${path}.${k}`)
    if (d !== undefined) return d
  }
  return `${path}: differs`
}

const verify = async (ours: Server, baseline: Server, key: string) => {
  for (const endpoint of ENDPOINTS) {
    const [a, b] = await Promise.all([get(ours.base, endpoint.path, key), get(baseline.base, endpoint.path, key)])
    if (a.status !== 200 || b.status !== 200) {
      throw new Error(`${endpoint.name}: status ours ${a.status}, baseline ${b.status}\nours: ${a.text.slice(0, 500)}\nbaseline: ${b.text.slice(0, 500)}`)
    }
    let how: string
    if (a.text === b.text) how = "byte-identical"
    else {
      const difference = firstDifference(JSON.parse(a.text), JSON.parse(b.text))
      if (difference !== undefined) throw new Error(`${endpoint.name}: the servers answer differently: ${difference}`)
      how = "JSON-equal (bytes differ)"
    }
    const body = JSON.parse(a.text)
    const detail = Array.isArray(body.data) ? `, ${body.data.length} rows, total ${body.meta?.total}` : ""
    log(`  ${endpoint.name}: ${how}, ${(Buffer.byteLength(a.text) / 1024).toFixed(1)} KB${detail}`)
  }
}

// ---------------------------------------------------------------------------------------------
// Report.

const f = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : "n/a")
const pad = (s: string, n: number) => s.padStart(n)

const printTable = (endpoint: Endpoint, rows: ReadonlyArray<readonly [string, Measured]>) => {
  log(`\n${endpoint.name}`)
  log(`  ${"server".padEnd(9)}${pad("req/s", 9)}${pad("p50 ms", 9)}${pad("p99 ms", 9)}${pad("CPU ms/req", 12)}${pad("peak RSS MB", 13)}${pad("requests", 10)}${pad("non-2xx/err", 13)}${pad("KB/resp", 9)}`)
  for (const [name, m] of rows) {
    log(`  ${name.padEnd(9)}${pad(f(m.rps), 9)}${pad(f(m.p50), 9)}${pad(f(m.p99), 9)}${pad(f(m.cpuMsPerRequest, 3), 12)}${pad(f(m.peakRssMb), 13)}${pad(String(m.requests), 10)}${pad(String(m.bad), 13)}${pad(f(m.kbPerResponse), 9)}`)
  }
  const ratio = (label: string, a: Measured, b: Measured) =>
    log(
      `  ${label}: throughput ${f(a.rps / b.rps, 2)}x, p50 ${f(a.p50 / b.p50, 2)}x, p99 ${f(a.p99 / b.p99, 2)}x, ` +
        `CPU/req ${f(a.cpuMsPerRequest / b.cpuMsPerRequest, 2)}x, peak RSS ${f(a.peakRssMb / b.peakRssMb, 2)}x`
    )
  const [ours, withLog, baseline] = rows.map(([, m]) => m)
  ratio("ours/baseline", ours!, baseline!)
  ratio("ours+log/ours (access log on, to a file)", withLog!, ours!)
}

// ---------------------------------------------------------------------------------------------

const main = async () => {
  const pgVersion = await admin(async (c) => {
    const version = (await c.query("SHOW server_version")).rows[0].server_version as string
    await c.query(`CREATE DATABASE ${dbName}`)
    return version
  })
  dbCreated = true
  log(`bench: node ${process.version}, ${cpus().length} CPUs, PostgreSQL ${pgVersion}, database ${dbName}`)
  log(`bench: ${MEMBERS} members, ${CONNECTIONS} connections, warm-up ${WARMUP} s + measured ${DURATION} s per server and endpoint, DB pool ${POOL_SIZE} each`)

  const key = await Effect.runPromise(Effect.scoped(seed.pipe(Effect.provide(StorageLive({ _tag: "Postgres", url: dbUrl, maxConnections: 10 })))))
  // A steady state: statistics and visibility map fresh, so no autovacuum mid-run changes a plan.
  const db = new pg.Client({ connectionString: dbUrl })
  await db.connect()
  await db.query("VACUUM ANALYZE").finally(() => db.end())
  log(`[${elapsed()}] seeded`)

  let profileDir: string | undefined
  if (PROFILE) {
    profileDir = here("./profiles")
    mkdirSync(profileDir, { recursive: true })
  }
  const accessLog = join(tmpdir(), `${dbName}-access.log`)
  const [ours, withLog, baseline] = await Promise.all([
    startServer("ours", "./our-server.ts", profileDir === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${profileDir}`]),
    startServer("ours+log", "./our-server.ts", [], { BENCH_ACCESS_LOG: accessLog }),
    startServer("baseline", "./baseline-server.ts")
  ])
  const servers = [ours, withLog, baseline] as const
  log(`[${elapsed()}] servers up: ${servers.map((s) => `${s.name} ${s.base} (pid ${s.child.pid})`).join(", ")}`)

  log("verifying the servers answer the same:")
  await verify(ours, baseline, key)
  await verify(withLog, baseline, key)

  const results: Array<{ endpoint: Endpoint; ours: Measured; withLog: Measured; baseline: Measured }> = []
  for (const endpoint of ENDPOINTS) {
    for (const server of servers) await fire(server.base + endpoint.path, key, WARMUP)
    const tallies = [new Tally(ours), new Tally(withLog), new Tally(baseline)] as const
    for (let round = 1; round <= ROUNDS; round++) {
      for (const tally of tallies) {
        const before = tally.ok
        const secondsBefore = tally.seconds
        await tally.round(endpoint, key, DURATION / ROUNDS)
        log(`[${elapsed()}] ${endpoint.name} round ${round}/${ROUNDS} ${tally.server.name}: ${f((tally.ok - before) / (tally.seconds - secondsBefore))} req/s`)
      }
    }
    results.push({ endpoint, ours: tallies[0].result(), withLog: tallies[1].result(), baseline: tallies[2].result() })
  }
  const hwm = { ours: procStatus(ours.child.pid!, "VmHWM"), baseline: procStatus(baseline.child.pid!, "VmHWM") }
  const logged = readFileSync(accessLog, "utf8").split("\n").filter((l) => l !== "").length

  log(`\n=== results: ${CONNECTIONS} connections, ${DURATION} s measured per server (${ROUNDS} alternating rounds), ${cpus().length} CPUs shared by load generator, servers and PostgreSQL ===`)
  log("req/s = 2xx responses per second; p50/p99 = latency over every response of every round; CPU ms/req = server")
  log("process user+sys CPU / 2xx responses; peak RSS = max VmRSS sampled every 100 ms during the measured rounds")
  for (const r of results) printTable(r.endpoint, [["ours", r.ours], ["ours+log", r.withLog], ["baseline", r.baseline]])
  log(`\nthe ours+log server wrote ${logged} access-log lines (JSON) to ${accessLog}`)
  log(`\nserver peak RSS over the whole bench (VmHWM): ours ${f(hwm.ours)} MB, baseline ${f(hwm.baseline)} MB`)

  const members = results.find((r) => r.endpoint.path.startsWith("/api/v1/members"))
  if (members === undefined) log("\nno verdict: the members endpoint was not measured (BENCH_ONLY)")
  else {
    const throughput = members.ours.rps / members.baseline.rps
    const p99 = members.ours.p99 / members.baseline.p99
    const clean = results.every((r) => r.ours.bad === 0 && r.withLog.bad === 0 && r.baseline.bad === 0)
    const pass = throughput >= BAR.throughput && p99 <= BAR.p99 && clean
    log(
      `\n${pass ? "PASS" : "FAIL"}: members page throughput ${f(throughput, 2)}x baseline (bar >= ${BAR.throughput}x), ` +
        `p99 ${f(p99, 2)}x baseline (bar <= ${BAR.p99}x)` +
        (clean ? "" : " -- some requests failed (non-2xx/errors above), the run does not count")
    )
    const logCost = 1 - members.withLog.rps / members.ours.rps
    log(`${logCost <= BAR.accessLogCost ? "PASS" : "FAIL"}: the access log costs ${f(logCost * 100)}% of the members page's throughput (bar <= ${BAR.accessLogCost * 100}%)`)
  }
  for (const server of servers) {
    if (server.output.lines === 0) continue
    log(`\nnote: the ${server.name} server printed ${server.output.lines} log line(s) during the bench (e.g. requests cut off when autocannon closes its connections at the end of a run); first lines:`)
    for (const line of server.output.first.slice(0, 4)) log(`  | ${line.slice(0, 160)}`)
  }
  if (profileDir !== undefined) log(`CPU profile of our server: ${profileDir}/ (written when it exits); summarise with: node bench/profile-summary.ts <file>`)
}

try {
  await main()
} catch (error) {
  console.error(`\nbench: ${error instanceof Error ? error.stack ?? error.message : error}`)
  process.exitCode = 1
} finally {
  await cleanup()
  log(`[${elapsed()}] done`)
}
