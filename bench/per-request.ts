/**
 * Where a light request's CPU goes (bench/README.md "Close to the metal"): GET /api/v1/me, a
 * single member and the members page, on the baseline, on the floor (floor-server.ts: Effect's
 * HTTP server and the product's key lookup, nothing else), and on ours without and with the
 * access log, in alternating rounds. Besides req/s and CPU per request it counts the server's
 * instructions per request with `perf stat` where the machine allows it, and the bytes it
 * allocates and promotes to V8's old generation per request, the collections a 1,000 requests
 * and their pauses, in all and the longest (from V8's own GC trace, `--trace-gc-nvp`): figures
 * that other work on the machine barely moves, unlike time. And the worst round's p99 latency.
 *
 *   node bench/per-request.ts      (DATABASE_URL as for `pnpm bench`; PER_REQUEST_SECONDS, PER_REQUEST_ROUNDS)
 *
 * PER_REQUEST_SERVERS picks the servers (default `baseline,floor,ours-nolog,ours`) and
 * PER_REQUEST_PATHS the requests (default `me,member,page`). PER_REQUEST_BEFORE=<dir>, a checkout
 * of another commit with its dependencies installed, adds `before`: that checkout's own server of
 * ours, with the access log, measured in the same rounds (a change against the commit before it).
 */
import autocannon from "autocannon"
import * as Effect from "effect/Effect"
import { spawn, spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import pg from "pg"
import { Keys, Members, Tenants } from "../packages/core/src/index.ts"
import { StorageLive } from "../packages/pg-adapter/src/index.ts"
import { children, collectLines, countGcLine, cpuSeconds, type GcTally, newGcTally, newOutput, spawnNode, stopChild } from "./processes.ts"
import { memberInputs } from "./seed-data.ts"
import { accessLogFile, CHAMBER_NODE_FLAGS, LISTENING } from "./shared.ts"

const SERVER_URL = process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres"
const SECONDS = Number(process.env.PER_REQUEST_SECONDS ?? 4)
const ROUNDS = Number(process.env.PER_REQUEST_ROUNDS ?? 2)
const BEFORE = process.env.PER_REQUEST_BEFORE || undefined
const SERVERS = (process.env.PER_REQUEST_SERVERS ?? `baseline,floor,ours-nolog,ours${BEFORE === undefined ? "" : ",before"}`).split(",")
const PATHS = (process.env.PER_REQUEST_PATHS ?? "me,member,page").split(",")
const dbName = `chamber_bench_req_${randomBytes(4).toString("hex")}`
const dbUrl = Object.assign(new URL(SERVER_URL), { pathname: `/${dbName}` }).toString()
const here = (file: string) => (file.startsWith("/") ? file : fileURLToPath(new URL(file, import.meta.url)))
const perf = spawnSync("perf", ["stat", "-x,", "-e", "instructions", "--", "true"], { encoding: "utf8" })
const canCount = perf.status === 0 && /instructions/.test(perf.stderr) && !/not (supported|counted)/.test(perf.stderr)

const admin = async (sql: string) => {
  const client = new pg.Client({ connectionString: SERVER_URL })
  await client.connect()
  await client.query(sql).finally(() => client.end())
}

const seed = Effect.gen(function*() {
  const tenant = yield* (yield* Tenants).create({ name: "Greater Riverside Chamber of Commerce", website: "https://riverside-chamber.example" })
  yield* (yield* Tenants).addUser(tenant.id, "admin@riverside-chamber.example", "chamber_admin")
  const members = yield* Members
  const ids: Array<number> = []
  for (const input of memberInputs(1000)) ids.push((yield* members.create(tenant.id, input)).id)
  const key = yield* (yield* Keys).mint({ tenant: tenant.id, asEmail: "admin@riverside-chamber.example", name: "Directory", scopes: "read", dailyLimit: 2_000_000_000 })
  return { key: key.key, member: ids[ids.length >> 1]! }
}).pipe(Effect.orDie)

interface Server {
  readonly name: string
  readonly pid: number
  readonly base: string
  /**
   * Bytes allocated and promoted to the old generation so far, summed over V8's GC trace lines, and
   * the collections counted: young (scavenges) and full.
   */
  readonly heap: GcTally
}

const start = (name: string, file: string, env: Record<string, string> = {}) =>
  new Promise<Server>((resolve, reject) => {
    const child = spawnNode(["--trace-gc-nvp", ...(file.endsWith("our-server.ts") ? CHAMBER_NODE_FLAGS : []), here(file)], { ...process.env, ...env, DATABASE_URL: dbUrl, CHAMBER_RATE_LIMIT_PER_MINUTE: "1000000000", NODE_ENV: "production" })
    const output = newOutput()
    const heap = newGcTally()
    collectLines(child.stderr!, output)
    collectLines(child.stdout!, output, (line) => {
      if (countGcLine(line, heap)) return true
      const port = line.match(new RegExp(`^${LISTENING} (\\d+)`))?.[1]
      if (port !== undefined) resolve({ name, pid: child.pid!, base: `http://127.0.0.1:${port}`, heap })
      return port !== undefined
    })
    child.once("exit", (code) => reject(new Error(`${name} exited (${code}): ${output.first.join("\n")}`)))
  })

/** Instructions the process executes while `during` runs (undefined where perf cannot count). */
const countInstructions = async <A>(pid: number, seconds: number, during: () => Promise<A>): Promise<[A, number | undefined]> => {
  if (!canCount) return [await during(), undefined]
  const counter = spawn("perf", ["stat", "-x,", "-e", "instructions", "-p", String(pid), "--", "sleep", String(seconds)], { stdio: ["ignore", "ignore", "pipe"] })
  let text = ""
  counter.stderr!.on("data", (d) => (text += d))
  const done = new Promise((resolve) => counter.once("exit", resolve))
  const result = await during()
  await done
  const n = Number(text.split("\n").find((l) => l.includes("instructions"))?.split(",")[0])
  return [result, Number.isFinite(n) ? n : undefined]
}

/** A server's figures on one request, over all rounds; its collections' as `GcTally` counts them. */
interface Tally extends GcTally {
  ok: number
  seconds: number
  cpu: number
  instructions: number
  counted: boolean
  /** The worst round's p99 latency. */
  p99: number
}

/** The collection figures a round adds up (the longest pause is the worst round's instead). */
const SUMMED_GC = ["allocated", "promoted", "scavenges", "full", "pauseMs"] as const

const main = async () => {
  await admin(`CREATE DATABASE ${dbName}`)
  try {
    const world = await Effect.runPromise(Effect.scoped(seed.pipe(Effect.provide(StorageLive({ _tag: "Postgres", url: dbUrl, maxConnections: 4 })))))
    const accessLog = accessLogFile(dbName)
    const known: Record<string, () => Promise<Server>> = {
      baseline: () => start("baseline", "./baseline-server.ts"),
      floor: () => start("floor", "./floor-server.ts"),
      "ours-nolog": () => start("ours-nolog", "./our-server.ts"),
      ours: () => start("ours", "./our-server.ts", { BENCH_ACCESS_LOG: accessLog }),
      before: () => {
        if (BEFORE === undefined) throw new Error("per-request: the server `before` needs PER_REQUEST_BEFORE=<a checkout>")
        return start("before", join(resolve(BEFORE), "bench", "our-server.ts"), { BENCH_ACCESS_LOG: accessLogFile(`${dbName}-before`) })
      }
    }
    const servers: Array<Server> = []
    for (const name of SERVERS) {
      const make = known[name]
      if (make === undefined) throw new Error(`per-request: no server ${JSON.stringify(name)} (${Object.keys(known).join(", ")})`)
      servers.push(await make())
    }
    console.log(`per-request: ${SECONDS} s x ${ROUNDS} rounds per server and endpoint, 32 connections; instructions ${canCount ? "counted by perf stat" : "not counted (perf stat unavailable)"}`)
    const headers = { authorization: `Bearer ${world.key}` }
    const paths: Record<string, string> = { me: "/api/v1/me", member: `/api/v1/members/${world.member}`, page: "/api/v1/members?page=1" }
    for (const path of PATHS.map((name) => paths[name] ?? name)) {
      // The floor answers the two light requests only.
      const measured = servers.filter((s) => s.name !== "floor" || !path.includes("?"))
      const tallies = new Map<string, Tally>(measured.map((s) => [s.name, { ...newGcTally(), ok: 0, seconds: 0, cpu: 0, instructions: 0, counted: true, p99: 0 }]))
      for (const s of measured) await autocannon({ url: s.base + path, connections: 32, duration: 2, headers })
      for (let round = 0; round < ROUNDS; round++) {
        for (const s of measured) {
          const t = tallies.get(s.name)!
          const before = cpuSeconds(s.pid)
          const heapBefore = { ...s.heap }
          s.heap.maxPauseMs = 0
          const [r, n] = await countInstructions(s.pid, SECONDS, (): Promise<any> => autocannon({ url: s.base + path, connections: 32, duration: SECONDS, headers }))
          t.cpu += cpuSeconds(s.pid) - before
          for (const field of SUMMED_GC) t[field] += s.heap[field] - heapBefore[field]
          t.maxPauseMs = Math.max(t.maxPauseMs, s.heap.maxPauseMs)
          t.p99 = Math.max(t.p99, r.latency.p99)
          t.ok += r["2xx"]
          t.seconds += r.duration
          if (r.non2xx > 0 || r.errors > 0) throw new Error(`${s.name} ${path}: ${r.non2xx} non-2xx, ${r.errors} errors`)
          if (n === undefined) t.counted = false
          else t.instructions += n
        }
      }
      console.log(`\nGET ${path}`)
      console.log(
        `  ${"server".padEnd(11)}${"req/s".padStart(9)}${"CPU µs/req".padStart(12)}${"k instr/req".padStart(13)}${"vs baseline".padStart(13)}${
          "KB alloc/req".padStart(14)
        }${"KB promoted/req".padStart(17)}${"scav/1k req".padStart(13)}${"full/1k req".padStart(13)}${"GC ms/1k req".padStart(14)}${
          "max GC ms".padStart(11)
        }${"p99 ms".padStart(8)}`
      )
      const base = tallies.get("baseline")
      for (const [name, t] of tallies) {
        const instr = t.counted ? t.instructions / t.ok / 1000 : NaN
        const ratio = t.counted && base !== undefined ? (t.instructions / t.ok) / (base.instructions / base.ok) : NaN
        console.log(
          `  ${name.padEnd(11)}${(t.ok / t.seconds).toFixed(0).padStart(9)}${((t.cpu * 1e6) / t.ok).toFixed(1).padStart(12)}${
            Number.isFinite(instr) ? instr.toFixed(0).padStart(13) : "n/a".padStart(13)
          }${Number.isFinite(ratio) ? `${ratio.toFixed(2)}x`.padStart(13) : "".padStart(13)}${(t.allocated / t.ok / 1024).toFixed(1).padStart(14)}${
            (t.promoted / t.ok / 1024).toFixed(2).padStart(17)
          }${((t.scavenges * 1000) / t.ok).toFixed(1).padStart(13)}${((t.full * 1000) / t.ok).toFixed(2).padStart(13)}${
            ((t.pauseMs * 1000) / t.ok).toFixed(1).padStart(14)
          }${t.maxPauseMs.toFixed(1).padStart(11)}${t.p99.toFixed(1).padStart(8)}`
        )
      }
    }
  } finally {
    await Promise.all(children.map(stopChild))
    await admin(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`)
  }
}

await main()
