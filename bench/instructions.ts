/**
 * Instructions a server executes per invoice flow, or per GET /api/v1/me, counted by valgrind's
 * callgrind (bench/README.md "The statements of a transaction"): a count that the machine's other
 * work does not move, unlike time, which on this shared machine moves by more than the changes
 * worth measuring. Each server starts under callgrind with counting off, answers a warm-up (the
 * compilers settle), then counting is switched on (`callgrind_control -i on`) for the measured
 * flows (or requests) and off again before it stops: start-up and warm-up are not counted. V8
 * runs single-threaded (`--single-threaded`), so the collector's and compilers' work is counted
 * where it happens.
 *
 * Run it on an otherwise idle machine and compare servers of one run: under heavy other load,
 * work that time drives (timers, the access log's 10 ms batches, V8's idle tasks) falls on more
 * of the flows and the counts grow (bench/README.md).
 *
 *   node bench/instructions.ts          (about 3 minutes a server; needs valgrind)
 *
 * INSTR_CACHE=1 also simulates the caches and branch predictor (`--cache-sim=yes --branch-sim=yes`,
 * about twice as slow) and prints their misses a flow: what instructions alone do not say about
 * how fast they run.
 *
 * INSTR_WHAT `invoices` (default) or `me`; INSTR_WARMUP and INSTR_COUNT, flows or requests
 * (default 300 and 300 flows, 3,000 and 3,000 requests); INSTR_SERVERS among `ours`, `baseline`
 * and `other` (INSTR_OTHER=<checkout>: another checkout's bench/our-server.ts, installed),
 * default `ours,baseline` and `other` when given; DATABASE_URL as for `pnpm bench`.
 */
import autocannon from "autocannon"
import * as Effect from "effect/Effect"
import { spawn, spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import pg from "pg"
import { StorageLive } from "../packages/pg-adapter/src/index.ts"
import { flowRequests, seedChamber } from "./invoice-flow.ts"
import { collectLines, newOutput } from "./processes.ts"
import { accessLogFile, CHAMBER_NODE_FLAGS, LISTENING, POOL_SIZE } from "./shared.ts"

const SERVER_URL = process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres"
const WHAT = process.env.INSTR_WHAT === "me" ? "me" : "invoices"
const WARMUP = Number(process.env.INSTR_WARMUP ?? (WHAT === "me" ? 3000 : 300))
const COUNT = Number(process.env.INSTR_COUNT ?? (WHAT === "me" ? 3000 : 300))
const OTHER = process.env.INSTR_OTHER
const CACHE = process.env.INSTR_CACHE === "1"
const SERVERS = (process.env.INSTR_SERVERS ?? `${OTHER ? "other," : ""}ours,baseline`).split(",")
const dbName = `chamber_bench_instr_${randomBytes(4).toString("hex")}`
const dbUrl = Object.assign(new URL(SERVER_URL), { pathname: `/${dbName}` }).toString()
const here = (file: string) => fileURLToPath(new URL(file, import.meta.url))

if (!(COUNT > 0 && WARMUP >= 0)) throw new Error("instructions: INSTR_COUNT must be positive and INSTR_WARMUP not negative")
if (spawnSync("valgrind", ["--version"]).status !== 0) throw new Error("instructions: valgrind is not installed")

/** Switches callgrind's counting in the process on or off. */
const counting = (pid: number, on: boolean) => {
  const control = spawnSync("callgrind_control", ["-i", on ? "on" : "off", String(pid)], { encoding: "utf8" })
  if (control.status !== 0) throw new Error(`callgrind_control: ${control.stderr || control.stdout}`)
}

const query = async (url: string, sql: string) => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  await client.query(sql).finally(() => client.end())
}

const serverFile = (name: string) => {
  if (name === "ours") return here("./our-server.ts")
  if (name === "baseline") return here("./baseline-server.ts")
  if (name === "other" && OTHER) return join(OTHER, "bench/our-server.ts")
  throw new Error(`instructions: unknown server ${name}`)
}

/** Instructions one server executed answering COUNT flows or requests, after WARMUP of them. */
const countRun = async (name: string, world: Effect.Success<typeof seedChamber>) => {
  const file = serverFile(name)
  const out = join(tmpdir(), `${dbName}.${name}.callgrind`)
  const child = spawn(
    "valgrind",
    ["--tool=callgrind", "--instr-atstart=no", ...(CACHE ? ["--cache-sim=yes", "--branch-sim=yes"] : []), `--callgrind-out-file=${out}`, "--smc-check=all-non-file", process.execPath, "--single-threaded", ...(file.endsWith("our-server.ts") ? CHAMBER_NODE_FLAGS : []), file],
    {
      env: {
        ...process.env,
        DATABASE_URL: dbUrl,
        BENCH_POOL_SIZE: String(POOL_SIZE),
        CHAMBER_RATE_LIMIT_PER_MINUTE: "1000000000",
        NODE_ENV: "production",
        BENCH_ACCESS_LOG: accessLogFile(`${dbName}.${name}`)
      },
      stdio: ["ignore", "pipe", "pipe"]
    }
  )
  const output = newOutput()
  collectLines(child.stderr!, output)
  const base = await new Promise<string>((resolve, reject) => {
    collectLines(child.stdout!, output, (line) => {
      const port = line.match(new RegExp(`^${LISTENING} (\\d+)`))?.[1]
      if (port !== undefined) resolve(`http://127.0.0.1:${port}`)
      return port !== undefined
    })
    child.once("exit", (code) => reject(new Error(`${name} exited (${code}): ${output.first.join("\n")}`)))
  })
  const fire = (count: number): Promise<any> =>
    WHAT === "invoices"
      ? autocannon({ url: base, connections: 4, amount: count * 3, timeout: 120, headers: { authorization: `Bearer ${world.key}` }, requests: flowRequests(world.memberIds) as any })
      : autocannon({ url: `${base}/api/v1/me`, connections: 4, amount: count, timeout: 120, headers: { authorization: `Bearer ${world.readKey}` } })
  if (WARMUP > 0) await fire(WARMUP)
  counting(child.pid!, true)
  const result = await fire(COUNT)
  counting(child.pid!, false)
  child.kill("SIGINT")
  await new Promise((resolve) => child.once("exit", resolve))
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${name}: ${result.non2xx} non-2xx, ${result.errors} errors`)
  const text = readFileSync(out, "utf8")
  rmSync(out, { force: true })
  const events = text.match(/^events: (.+)$/m)?.[1]?.split(" ") ?? []
  const totals = text.match(/^totals: (.+)$/m)?.[1]?.split(" ").map(Number) ?? []
  const per = Object.fromEntries(events.map((event, i) => [event, (totals[i] ?? NaN) / COUNT]))
  if (!Number.isFinite(per.Ir)) throw new Error(`${name}: no instruction total in ${out}`)
  return per as Record<string, number> & { readonly Ir: number }
}

/** callgrind's simulated misses: first-level instruction and data reads and writes, last-level, mispredicted branches. */
const MISSES = [["I1mr", "I1 miss"], ["D1mr", "D1 read miss"], ["D1mw", "D1 write miss"], ["ILmr", "LL instr miss"], ["DLmr", "LL read miss"], ["DLmw", "LL write miss"], ["Bcm", "cond. mispredict"], ["Bim", "indirect mispredict"]] as const

const main = async () => {
  await query(SERVER_URL, `CREATE DATABASE ${dbName}`)
  try {
    const world = await Effect.runPromise(Effect.scoped(seedChamber.pipe(Effect.provide(StorageLive({ _tag: "Postgres", url: dbUrl, maxConnections: 4 })))))
    const unit = WHAT === "invoices" ? "flow" : "request"
    console.log(`instructions: ${WHAT === "invoices" ? "the invoice flow" : "GET /api/v1/me"}, ${COUNT} ${unit}s counted after ${WARMUP} a server under callgrind, 4 connections`)
    const per = new Map<string, number>()
    for (const name of SERVERS) {
      const counts = await countRun(name, world)
      per.set(name, counts.Ir)
      const misses = CACHE ? MISSES.map(([event, label]) => `${label} ${(counts[event]! / 1000).toFixed(1)}k`).join(", ") : ""
      console.log(`  ${name.padEnd(9)} ${(counts.Ir / 1000).toFixed(0).padStart(8)} k instructions a ${unit}${CACHE ? `; ${misses}` : ""}`)
    }
    const baseline = per.get("baseline")
    if (baseline !== undefined) {
      for (const [name, n] of per) if (name !== "baseline") console.log(`  ${name} against the baseline: ${(n / baseline).toFixed(2)}x`)
    }
  } finally {
    await query(SERVER_URL, `DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`)
  }
}

await main()
