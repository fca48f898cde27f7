/**
 * Where the invoice flow's CPU goes (bench/README.md "The statements of a transaction"): the
 * flow of `pnpm bench` (create a draft, issue it, pay it whole) run a fixed number of times on
 * each server in alternating rounds, the database vacuumed and checkpointed between rounds. Per
 * flow it prints the server's CPU split by thread (the main thread's user time, V8's helper
 * threads, the kernel's), and from V8's GC trace the KB allocated and promoted, the collections
 * and their pauses: figures the machine's other work moves less than it moves throughput.
 *
 *   node bench/per-flow.ts
 *
 * PER_FLOW_FLOWS (1000 a round), PER_FLOW_ROUNDS (4), DATABASE_URL as for `pnpm bench`;
 * PER_FLOW_SERVERS picks among `ours` (the access log on), `ours-nolog` and `baseline`
 * (default: all three); PER_FLOW_OTHER=<checkout> adds `other`, the `bench/our-server.ts` of
 * another checkout of this repository (installed), to compare two commits in one run;
 * PER_FLOW_PERF=1 records each server's rounds with `perf record` (on-CPU samples with JIT
 * symbols) into `bench/profiles/`, for `node bench/perf-summary.ts`; PER_FLOW_NODE_FLAGS adds Node
 * flags to every server's (V8's logs of compilations and deoptimizations, say).
 */
import autocannon from "autocannon"
import * as Effect from "effect/Effect"
import { type ChildProcess, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdirSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import pg from "pg"
import { StorageLive } from "../packages/pg-adapter/src/index.ts"
import { flowRequests, seedChamber } from "./invoice-flow.ts"
import { children, collectLines, countGcLine, type GcTally, newGcTally, newOutput, spawnNode, stopChild } from "./processes.ts"
import { accessLogFile, CHAMBER_NODE_FLAGS, LISTENING, POOL_SIZE } from "./shared.ts"

const SERVER_URL = process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres"
const FLOWS = Number(process.env.PER_FLOW_FLOWS ?? 1000)
const ROUNDS = Number(process.env.PER_FLOW_ROUNDS ?? 4)
const PERF = process.env.PER_FLOW_PERF === "1"
const OTHER = process.env.PER_FLOW_OTHER
const NODE_FLAGS = (process.env.PER_FLOW_NODE_FLAGS ?? "").split(" ").filter(Boolean)
const SERVERS = (process.env.PER_FLOW_SERVERS ?? `ours,ours-nolog,baseline${OTHER ? ",other" : ""}`).split(",")
const dbName = `chamber_bench_flow_${randomBytes(4).toString("hex")}`
const dbUrl = Object.assign(new URL(SERVER_URL), { pathname: `/${dbName}` }).toString()
const here = (file: string) => fileURLToPath(new URL(file, import.meta.url))
const profiles = here("./profiles")

const query = async (url: string, sql: string) => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  await client.query(sql).finally(() => client.end())
}

/** Seconds of CPU a process has used: its main thread's user time, its other threads' user time, and all its kernel time. */
const threadTimes = (pid: number) => {
  const times = { main: 0, helpers: 0, kernel: 0 }
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const fields = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8").split(") ")[1]!.split(" ")
    const user = Number(fields[11]) / 100
    times.kernel += Number(fields[12]) / 100
    if (tid === String(pid)) times.main += user
    else times.helpers += user
  }
  return times
}

interface Server {
  readonly name: string
  readonly pid: number
  readonly base: string
  /** Summed from V8's `--trace-gc-nvp` lines so far. */
  readonly gc: GcTally
}

const start = (name: string, file: string, env: Record<string, string> = {}) =>
  new Promise<Server>((resolve, reject) => {
    const ours = file.endsWith("our-server.ts")
    const child = spawnNode([...(ours ? CHAMBER_NODE_FLAGS : []), ...(PERF ? ["--perf-basic-prof"] : []), ...NODE_FLAGS, "--trace-gc-nvp", file], {
      ...process.env,
      ...env,
      DATABASE_URL: dbUrl,
      BENCH_POOL_SIZE: String(POOL_SIZE),
      CHAMBER_RATE_LIMIT_PER_MINUTE: "1000000000",
      NODE_ENV: "production"
    })
    const gc = newGcTally()
    const output = newOutput()
    collectLines(child.stderr!, output)
    collectLines(child.stdout!, output, (line) => {
      if (countGcLine(line, gc)) return true
      const port = line.match(new RegExp(`^${LISTENING} (\\d+)`))?.[1]
      if (port !== undefined) resolve({ name, pid: child.pid!, base: `http://127.0.0.1:${port}`, gc })
      return port !== undefined
    })
    child.once("exit", (code) => reject(new Error(`${name} exited (${code}): ${output.first.join("\n")}`)))
  })

interface Tally {
  flows: number
  seconds: number
  main: number
  helpers: number
  kernel: number
  allocated: number
  promoted: number
  scavenges: number
  full: number
  pauseMs: number
}

const settle = async () => {
  await query(dbUrl, "VACUUM (ANALYZE) invoices, invoice_lines, invoice_sequences, payments, outbox_events, api_keys")
  await query(SERVER_URL, "CHECKPOINT").catch(() => undefined)
}

/** `perf record` of a server while `during` runs, when PER_FLOW_PERF=1. */
const recorded = async <A>(server: Server, round: number, during: () => Promise<A>): Promise<A> => {
  if (!PERF) return during()
  mkdirSync(profiles, { recursive: true })
  const out = join(profiles, `${server.name}.${dbName}.round${round}.perf.data`)
  const recorder: ChildProcess = spawn("perf", ["record", "-e", "cpu-clock", "-F", "2999", "-g", "-p", String(server.pid), "-o", out], { stdio: "ignore" })
  await new Promise((resolve) => setTimeout(resolve, 300))
  try {
    return await during()
  } finally {
    recorder.kill("SIGINT")
    await new Promise((resolve) => recorder.once("exit", resolve))
    console.log(`  perf: ${out} (${FLOWS} flows)`)
  }
}

const main = async () => {
  await query(SERVER_URL, `CREATE DATABASE ${dbName}`)
  try {
    const world = await Effect.runPromise(Effect.scoped(seedChamber.pipe(Effect.provide(StorageLive({ _tag: "Postgres", url: dbUrl, maxConnections: 4 })))))
    const accessLog = (suffix: string) => accessLogFile(`${dbName}-${suffix}`)
    const servers: Array<Server> = []
    for (const name of SERVERS) {
      if (name === "ours") servers.push(await start(name, here("./our-server.ts"), { BENCH_ACCESS_LOG: accessLog("ours") }))
      else if (name === "ours-nolog") servers.push(await start(name, here("./our-server.ts")))
      else if (name === "baseline") servers.push(await start(name, here("./baseline-server.ts")))
      else if (name === "other" && OTHER) servers.push(await start(name, join(OTHER, "bench/our-server.ts"), { BENCH_ACCESS_LOG: accessLog("other") }))
      else throw new Error(`per-flow: unknown server ${name}`)
    }
    const fire = (server: Server, flows: number) =>
      autocannon({ url: server.base, connections: 32, amount: flows * 3, headers: { authorization: `Bearer ${world.key}` }, requests: flowRequests(world.memberIds) as any }) as Promise<any>
    console.log(`per-flow: ${ROUNDS} rounds of ${FLOWS} invoice flows per server, 32 connections, alternating; servers ${servers.map((s) => s.name).join(", ")}`)
    for (const server of servers) await fire(server, 500)
    const tallies = new Map<string, Tally>(servers.map((s) => [s.name, { flows: 0, seconds: 0, main: 0, helpers: 0, kernel: 0, allocated: 0, promoted: 0, scavenges: 0, full: 0, pauseMs: 0 }]))
    for (let round = 0; round < ROUNDS; round++) {
      // Each round starts with the next server, so none always follows the same one.
      const order = [...servers.slice(round % servers.length), ...servers.slice(0, round % servers.length)]
      for (const server of order) {
        await settle()
        const tally = tallies.get(server.name)!
        const gc = { ...server.gc }
        const before = threadTimes(server.pid)
        const started = performance.now()
        const result = await recorded(server, round, () => fire(server, FLOWS))
        const after = threadTimes(server.pid)
        if (result.non2xx > 0 || result.errors > 0) throw new Error(`${server.name}: ${result.non2xx} non-2xx, ${result.errors} errors`)
        tally.seconds += (performance.now() - started) / 1000
        tally.flows += result["2xx"] / 3
        tally.main += after.main - before.main
        tally.helpers += after.helpers - before.helpers
        tally.kernel += after.kernel - before.kernel
        tally.allocated += server.gc.allocated - gc.allocated
        tally.promoted += server.gc.promoted - gc.promoted
        tally.scavenges += server.gc.scavenges - gc.scavenges
        tally.full += server.gc.full - gc.full
        tally.pauseMs += server.gc.pauseMs - gc.pauseMs
      }
    }
    const columns = ["flows/s", "CPU µs", "main user", "V8 helpers", "kernel", "KB alloc", "KB promoted", "scav/1k", "full/1k", "GC pause µs"]
    console.log(`\nper flow (CPU in µs; "main user": the main thread's user time)\n  ${"server".padEnd(12)}${columns.map((c) => c.padStart(12)).join("")}`)
    for (const [name, t] of tallies) {
      const per = (x: number, scale = 1e6) => ((x * scale) / t.flows)
      const cells = [
        (t.flows / t.seconds).toFixed(1),
        per(t.main + t.helpers + t.kernel).toFixed(0),
        per(t.main).toFixed(0),
        per(t.helpers).toFixed(0),
        per(t.kernel).toFixed(0),
        per(t.allocated, 1 / 1024).toFixed(0),
        per(t.promoted, 1 / 1024).toFixed(1),
        per(t.scavenges, 1000).toFixed(1),
        per(t.full, 1000).toFixed(2),
        per(t.pauseMs, 1000).toFixed(0)
      ]
      console.log(`  ${name.padEnd(12)}${cells.map((c) => c.padStart(12)).join("")}`)
    }
  } finally {
    await Promise.all(children.map(stopChild))
    await query(SERVER_URL, `DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`)
  }
}

await main()
