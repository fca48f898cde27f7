/**
 * The bench's child processes, each registered so that cleanup stops it (SIGTERM, SIGKILL after
 * 5 s) whatever happens; what /proc says of one: its CPU time and resident memory.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import { benchScript, CHAMBER_NODE_FLAGS, chamberArgs, LISTENING } from "./shared.ts"

export const children: Array<ChildProcess> = []

/** Spawns `node <args>`, registered for cleanup, and resolves once a line of its stdout matches `ready`: the child, the match, its other output. */
export const startNode = (name: string, args: ReadonlyArray<string>, env: NodeJS.ProcessEnv, ready: RegExp, timeoutMs = 60_000, onLine?: (line: string) => void) =>
  new Promise<{ readonly child: ChildProcess; readonly match: RegExpMatchArray; readonly output: Output }>((resolve, reject) => {
    const child = spawn(process.execPath, [...args], { env, stdio: ["ignore", "pipe", "pipe"] })
    children.push(child)
    const output: Output = { lines: 0, first: [] }
    const timer = setTimeout(() => reject(new Error(`${name} did not start within ${timeoutMs / 1000} s`)), timeoutMs)
    let started = false
    collectLines(child.stderr!, output)
    collectLines(child.stdout!, output, (line) => {
      onLine?.(line)
      const match = started ? null : line.match(ready)
      if (match === null) return false
      started = true
      clearTimeout(timer)
      resolve({ child, match, output })
      return true
    })
    child.once("exit", (code, signal) => {
      clearTimeout(timer)
      reject(new Error(`${name} exited early (code ${code}, signal ${signal})\n${output.first.join("\n")}`))
    })
  })

/** A bench server, and what it printed (summarised at the end). */
export type Server = { readonly name: string; readonly child: ChildProcess; readonly base: string; readonly output: Output }

/** A bench server (`our-server.ts`, `baseline-server.ts`) on `databaseUrl` once it prints its port. */
export const startServer = async (name: string, script: "our-server.ts" | "baseline-server.ts", databaseUrl: string, env: Record<string, string> = {}): Promise<Server> => {
  const { child, match, output } = await startNode(name, [...(script === "our-server.ts" ? CHAMBER_NODE_FLAGS : []), benchScript(script)], {
    ...process.env, ...env, DATABASE_URL: databaseUrl, NODE_ENV: "production"
  }, new RegExp(`^${LISTENING} (\\d+)`))
  return { name, child, base: `http://127.0.0.1:${match[1]}`, output }
}

/** A `chamber serve` that listens: where, when it was started and how long it took to listen, the demo key it printed, if any, and its RSS now. */
export type Serving = { readonly base: string; readonly started: number; readonly listeningMs: number; readonly key: string | undefined; readonly rss: () => number }

/**
 * `chamber serve --port 0 <args>` as an operator runs it (no Redis, rate limits far away), from once
 * it listens until `use` is done; the demo key read from its text output (a log line never carries one).
 */
export const serveChamber = async <A>(args: ReadonlyArray<string>, env: Record<string, string>, use: (server: Serving) => Promise<A>): Promise<A> => {
  const started = performance.now()
  let key = undefined as string | undefined
  const { child, match } = await startNode("chamber serve", chamberArgs("serve", "--port", "0", ...args), {
    ...process.env, REDIS_URL: "", LOG_LEVEL: "info", NO_COLOR: "1", CHAMBER_RATE_LIMIT_PER_MINUTE: "1000000000", ...env
  }, /^Chamber Data API on (http:\/\/\S+)\/api\/v1/, 300_000, (line) => void (key ??= /^API key \(shown once, keep it\): (cck_\w+)/.exec(line)?.[1]))
  try {
    return await use({ base: match[1]!, started, listeningMs: performance.now() - started, key, rss: () => procStatus(child.pid!, "VmRSS") })
  } finally {
    await stopChild(child)
  }
}

export const stopChild = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    const timer = setTimeout(() => child.kill("SIGKILL"), 5_000)
    child.once("exit", () => resolve(clearTimeout(timer)))
    child.kill("SIGTERM")
  })

/** What a child printed (logs, errors): kept out of the report, summarised at the end. */
export type Output = { lines: number; first: Array<string> }

/** Feeds a child's stream into `output` line by line; `onLine` may claim a line (returns true) so it is not counted. */
const collectLines = (stream: NodeJS.ReadableStream, output: Output, onLine: (line: string) => boolean = () => false) => {
  let partial = ""
  stream.setEncoding("utf8")
  stream.on("data", (chunk: string) => {
    const lines = (partial + chunk).split("\n")
    partial = lines.pop()!
    for (const line of lines) {
      if (line.trim() === "" || onLine(line)) continue
      output.lines++
      if (output.first.length < 8) output.first.push(line)
    }
  })
}

/** What /proc says of a process, NaN once it is gone. */
const proc = <A>(read: () => A, gone: A): A => {
  try {
    return read()
  } catch {
    return gone
  }
}

export const procStatus = (pid: number, field: "VmRSS" | "VmHWM"): number =>
  proc(() => Number(readFileSync(`/proc/${pid}/status`, "utf8").match(new RegExp(`${field}:\\s+(\\d+) kB`))?.[1] ?? NaN) / 1024, NaN)

/** User + system CPU seconds the process, or its thread `tid`, has used so far (/proc/<pid>/stat, 100 ticks a second). */
export const cpuSeconds = (pid: number, tid?: number): number =>
  proc(() => {
    const fields = readFileSync(tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`, "utf8").replace(/^.*\) /, "").split(" ")
    // After the command name: state is field 3, utime field 14, stime field 15 (1-based, man 5 proc).
    return (Number(fields[11]) + Number(fields[12])) / 100
  }, NaN)

/**
 * User + system CPU seconds used so far by the processes named `postgres` on this machine (the
 * server and every backend): over a window in which no backend ends, what PostgreSQL spent in it.
 */
export const postgresCpuSeconds = (): number =>
  readdirSync("/proc").filter((entry) => /^\d+$/.test(entry))
    .reduce((total, pid) => total + (proc(() => readFileSync(`/proc/${pid}/comm`, "utf8").trim(), "") === "postgres" ? cpuSeconds(Number(pid)) : 0), 0)
