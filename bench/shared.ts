/** What the bench's scripts share: the knobs, the `chamber` command line, the access log's file, the figures' arithmetic and verdicts. */
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import type { Server, Socket } from "node:net"
import type pg from "pg"
import { cpus, loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32)
export const DURATION = Number(process.env.BENCH_DURATION ?? 10)
export const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 2))
export const WARMUP = Number(process.env.BENCH_WARMUP ?? 4)

/** The line a server prints on stdout once it listens: `BENCH_LISTENING <port>`. */
export const LISTENING = "BENCH_LISTENING"

/** The `chamber` command's own Node flags (bin.ts's first line): every server and relay of ours starts with them. */
const BIN = fileURLToPath(new URL("../packages/cli/src/bin.ts", import.meta.url))
export const CHAMBER_NODE_FLAGS: ReadonlyArray<string> = (() => {
  const first = readFileSync(BIN, "utf8").split("\n", 1)[0]!
  const flags = /^#!\/usr\/bin\/env -S node((?: --\S+)*)$/.exec(first)?.[1]
  if (flags === undefined) throw new Error(`cli/src/bin.ts's first line is not "#!/usr/bin/env -S node <flags>": ${first}`)
  return flags.trim().split(" ").filter(Boolean)
})()

/** A script of the bench's own (`our-server.ts`, `relay-baseline.ts`, ...): its path. */
export const benchScript = (file: string) => fileURLToPath(new URL(file, import.meta.url))

/** Node's arguments for `chamber <args>` as shipped: its own flags, then packages/cli/src/bin.ts. */
export const chamberArgs = (...args: ReadonlyArray<string>): Array<string> => [...CHAMBER_NODE_FLAGS, BIN, ...args]

/** A file in the temp directory for an access log, removed when the bench exits unless BENCH_KEEP_ACCESS_LOG=1. */
export const accessLogFile = (name: string): string => {
  const path = join(tmpdir(), `${name}-access.log`)
  if (process.env.BENCH_KEEP_ACCESS_LOG !== "1") process.once("exit", () => rmSync(path, { force: true }))
  return path
}

/** A fresh directory in the temp directory for `use`, removed after it whatever happens. */
export const withTempDir = async <A>(prefix: string, use: (dir: string) => Promise<A>): Promise<A> => {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  try {
    return await use(dir)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** The same number of database connections for every server. */
export const POOL_SIZE = Number(process.env.BENCH_POOL_SIZE ?? 10)

/** What a section run after the HTTP endpoints gets from run.ts. */
export interface SectionContext {
  readonly dbUrl: string
  /** A connection to the bench database. */
  readonly db: pg.Client
  readonly log: (line: string) => void
  /** Seconds since the bench began, for progress lines. */
  readonly elapsed: () => string
}

export const f = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : "n/a")

/** The p-th percentile of the values (nearest rank); p 50 is the median. */
export const percentile = (values: ReadonlyArray<number>) => {
  const sorted = Float64Array.from(values).sort()
  return (p: number) => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!)
}

/** `PASS: line` or `FAIL: line`; a run with failed requests (not clean) does not count. */
export const verdict = (log: (line: string) => void, pass: boolean, line: string, clean = true) =>
  log(`${pass && clean ? "PASS" : "FAIL"}: ${line}${clean ? "" : " -- some requests failed (non-2xx/errors above): the run does not count"}`)

export const machine = () => `${cpus().length} CPUs, load average ${loadavg().map((l) => f(l)).join(" ")}`

/** The first lines children printed (logs, errors), if any. */
export const notePrinted = (log: (line: string) => void, who: string, lines: ReadonlyArray<string>) => {
  if (lines.length > 0) log(`\nnote: ${who} printed, e.g.:\n${lines.slice(0, 4).map((line) => `  | ${line.slice(0, 160)}`).join("\n")}`)
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Listens on a free port of 127.0.0.1: the port, and a close that also ends the connections still open. */
export const listen = async (server: Server) => {
  await new Promise<void>((resolve, reject) => server.once("error", reject).listen(0, "127.0.0.1", resolve))
  const sockets = new Set<Socket>()
  server.on("connection", (socket) => void (sockets.add(socket), socket.on("close", () => sockets.delete(socket))))
  const close = () => new Promise<void>((resolve) => void (server.close(() => resolve()), sockets.forEach((socket) => socket.destroy())))
  return { port: (server.address() as { port: number }).port, close }
}

type Queries = { readonly query: (text: string) => Promise<unknown> }

/** Autovacuum off on the tables the bench writes, for the run: it settles them itself, outside the measured windows. */
export const noAutovacuum = async (db: Queries, tables: ReadonlyArray<string>) => {
  for (const table of tables) await db.query(`ALTER TABLE ${table} SET (autovacuum_enabled = false, toast.autovacuum_enabled = false)`)
}

/**
 * Dead rows vacuumed, statistics refreshed, dirty pages flushed, so that no round pays for
 * another's writes. CHECKPOINT needs a superuser or pg_checkpoint; without it the round goes ahead.
 */
export const settleTables = async (db: Queries, tables: ReadonlyArray<string>) => {
  await db.query(`VACUUM (ANALYZE) ${tables.join(", ")}`)
  await db.query("CHECKPOINT").catch(() => {})
}
