/**
 * The `chamber` program as an operator runs it: a real process per command, on embedded PGlite
 * (a data directory of its own) or on PostgreSQL (a database of its own), and real servers.
 */
import { assert } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import { createServer } from "node:net"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { DatabaseConfigRef, type runtimes } from "@chamber/pg-adapter/testing"
import { tempDir } from "./tempDirs.ts"

export const BIN = fileURLToPath(new URL("../src/bin.ts", import.meta.url))

export interface Result {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** The environment every command of a suite runs with. */
export class Env extends Context.Service<Env, Record<string, string>>()("test/CliEnv") {}

/** The environment a runtime's commands run with: DATABASE_URL, or a fresh data directory. */
export const envLayer = (rt: ReturnType<typeof runtimes>[number]) =>
  Layer.effect(Env, Effect.gen(function*() {
    const config = yield* DatabaseConfigRef
    if (config._tag === "Postgres") return { DATABASE_URL: config.url } as Record<string, string>
    const dir = yield* tempDir("cli")
    return { CHAMBER_DATA_DIR: join(dir, "data"), DATABASE_URL: "" }
  })).pipe(Layer.provide(rt.database))

const spawnChamber = (env: Record<string, string>, args: ReadonlyArray<string>, extra: Record<string, string>) =>
  // Rate limits in-process (REDIS_URL unset) unless a test says otherwise; CI sets REDIS_URL for the Redis suites.
  spawn(process.execPath, [BIN, ...args], { env: { ...process.env, REDIS_URL: "", ...env, NO_COLOR: "1", ...extra } })

/** One `chamber` command, run to its end. */
export const chamber = (args: ReadonlyArray<string>, extraEnv: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const env = yield* Env
    return yield* Effect.promise(() =>
      new Promise<Result>((resolve) => {
        const child = spawnChamber(env, args, extraEnv)
        let stdout = ""
        let stderr = ""
        child.stdout.on("data", (d) => (stdout += d))
        child.stderr.on("data", (d) => (stderr += d))
        child.on("close", (code) => resolve({ code, stdout, stderr }))
      })
    )
  })

/**
 * `chamber` commands that do not depend on one another: their results in order. On PostgreSQL they
 * run side by side (four at a time); on an embedded database one after another, as its single
 * process serves one transaction at a time.
 */
export const chambers = (list: ReadonlyArray<ReadonlyArray<string>>, extraEnv: Record<string, string> = {}) =>
  Effect.flatMap(Env, (env) => Effect.forEach(list, (args) => chamber(args, extraEnv), { concurrency: env.DATABASE_URL ? 4 : 1 }))

export const json = (r: Result) => {
  assert.strictEqual(r.code, 0, `exit ${r.code}: ${r.stderr}`)
  return JSON.parse(r.stdout)
}

export const freePort = () =>
  Effect.promise(() =>
    new Promise<number>((resolve) => {
      const s = createServer()
      s.listen(0, "127.0.0.1", () => {
        const address = s.address()
        const port = typeof address === "object" && address !== null ? address.port : 0
        s.close(() => resolve(port))
      })
    })
  )

export interface Serving {
  readonly child: ChildProcessWithoutNullStreams
  readonly port: number
  readonly stdout: () => string
  readonly stderr: () => string
  /** Resolves with the exit code once the process has ended. */
  readonly exited: Promise<number | null>
  /** Resolves once the output (stdout and stderr) matches. */
  readonly waitFor: (pattern: RegExp, timeoutMs?: number) => Promise<string>
}

/**
 * `chamber serve` (on a port of its choosing unless `--port` is given) in the background until
 * the scope closes (then SIGTERM); resolves once it listens.
 */
export const serving = (args: ReadonlyArray<string> = [], extraEnv: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const env = yield* Env
    const child = yield* Effect.acquireRelease(
      Effect.sync(() => spawnChamber(env, ["serve", ...(args.includes("--port") ? [] : ["--port", "0"]), ...args], extraEnv)),
      (c) =>
        Effect.promise(() =>
          new Promise<void>((resolve) => {
            if (c.exitCode !== null || c.signalCode !== null) return resolve()
            c.on("close", () => resolve())
            c.kill("SIGTERM")
          })
        )
    )
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)))
    const waitFor = async (pattern: RegExp, timeoutMs = 30_000) => {
      for (let waited = 0; waited < timeoutMs; waited += 20) {
        const match = pattern.exec(stdout + stderr)
        if (match !== null) return match[0]
        if (child.exitCode !== null) break
        await new Promise((r) => setTimeout(r, 20))
      }
      throw new Error(`no ${pattern} in the output of serve: ${stdout}${stderr}`)
    }
    // A loaded machine can take a while to make a demo chamber; a start that fails says so at once.
    const url = yield* Effect.promise(() => waitFor(/Chamber Data API on http:\/\/[^\s"]+:\d+\/api\/v1/, 120_000))
    const port = Number(/:(\d+)\/api\/v1/.exec(url)![1])
    return { child, port, stdout: () => stdout, stderr: () => stderr, exited, waitFor } satisfies Serving
  })

export const get = (port: number, path: string, key: string) =>
  Effect.promise(async () => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { headers: { authorization: `Bearer ${key}` } })
    // Response bodies are the API's JSON, asserted on by shape in each test.
    return { status: res.status, body: await res.json() as any }
  })

export const post = (port: number, path: string, key: string, body: unknown) =>
  Effect.promise(async () => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify(body)
    })
    return { status: res.status, body: await res.json() as any }
  })
