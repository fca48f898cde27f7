/**
 * `chamber import` stopped mid-write on the embedded database, with `chamber serve` running
 * (docs/architecture.md "On the embedded database: slices under a hold"): killed (SIGKILL) or
 * interrupted (SIGINT) after it has written some of its slices, it leaves the chamber as it was:
 * the members' total, the change feed past its head and the subscription's deliveries do not move.
 * The next import into the chamber writes its own records and nothing of the stopped one:
 * afterwards the feed holds exactly its events after the head, and the deliveries grow by exactly
 * its records.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { performance } from "node:perf_hooks"
import { pgliteRuntime } from "@chamber/pg-adapter/testing"
import { BIN, chamber, Env, envLayer, get, json, post, serving } from "./harness.ts"
import { suiteDir } from "./tempDirs.ts"

const dir = suiteDir("import-killed")
const BEFORE = 3
const BIG = 20_000
/**
 * The import's progress when stderr is not a terminal (ImportProgress.ts): a line every 5 s of a
 * pass, the first once the pass has run 5 s. A `Writing:` line says slices have been written.
 */
const WRITING = /^Writing: [\d,]+ of [\d,]+ records/m

interface Stopped {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

/** `chamber import` in the background: its output so far, a wait for a line of it, and its end. */
const importing = (args: ReadonlyArray<string>) =>
  Effect.map(Env, (env) => {
    const child = spawn(process.execPath, [BIN, "import", ...args], { env: { ...process.env, REDIS_URL: "", ...env, NO_COLOR: "1" } })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    const closed = new Promise<Stopped>((resolve) => child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr })))
    /** Resolves once stderr matches; fails if the import ends first, or after `timeoutMs`. */
    const waitFor = (pattern: RegExp, timeoutMs: number) =>
      Effect.promise(() =>
        new Promise<string>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`no ${pattern} within ${timeoutMs} ms: ${stderr}`)), timeoutMs)
          const check = () => {
            const match = pattern.exec(stderr)
            if (match === null) return
            clearTimeout(timer)
            child.stderr.off("data", check)
            resolve(match[0])
          }
          child.stderr.on("data", check)
          check()
          void closed.then((r) => {
            clearTimeout(timer)
            reject(new Error(`the import ended (exit ${r.code}, signal ${r.signal}) before ${pattern}: ${r.stdout}${r.stderr}`))
          })
        })
      ).pipe(Effect.orDie)
    /** Sends `signal`, then resolves once the process has ended (failing after `timeoutMs`). */
    const stop = (signal: NodeJS.Signals, timeoutMs: number) =>
      Effect.promise(() => {
        child.kill(signal)
        return Promise.race([
          closed,
          new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`still running ${timeoutMs} ms after ${signal}: ${stderr}`)), timeoutMs).unref())
        ])
      })
    return { child, waitFor, stop, closed: Effect.promise(() => closed) }
  })

/** The JSON document stdout holds, or undefined when it holds anything else. */
const jsonDocument = (stdout: string): any => {
  try {
    return JSON.parse(stdout)
  } catch {
    return undefined
  }
}

const membersFile = (name: string, count: number, prefix: string) => {
  const file = join(dir, name)
  writeFileSync(file, JSON.stringify({
    members: Array.from({ length: count }, (_, i) => ({ ref: `${prefix}${i}`, name: `${prefix} ${i}`, status: "active", email: `${prefix.toLowerCase()}${i}@killed.example` }))
  }))
  return file
}

describe("chamber import stopped mid-write on the embedded database", () => {
  layer(envLayer(pgliteRuntime), { timeout: 120_000, excludeTestServices: true })((it) => {
    it.effect("killed (SIGKILL) or interrupted (SIGINT) while writing 20,000 members: the chamber, its feed and its deliveries stay as they were; the next import adds exactly its own", () =>
      Effect.gen(function*() {
        const server = yield* serving(["--no-relay"], { CHAMBER_RATE_LIMIT_PER_MINUTE: "1000000" })
        const tenant = json(yield* chamber(["tenant", "create", "--name", "Killed Chamber", "--admin", "ops@killed.example", "--json"]))
        const key: string = json(
          yield* chamber(["key", "mint", "--tenant", tenant.id, "--as", "ops@killed.example", "--name", "ops", "--scopes", "all", "--daily-limit", "1000000", "--json"])
        ).key

        // A subscription to member.created (no relay runs: its deliveries stay queued), then the members before the imports.
        const hook = yield* post(server.port, "/api/v1/hooks", key, { url: "https://hooks.example.com/import-killed", events: ["member.created"] })
        assert.strictEqual(hook.status, 201, JSON.stringify(hook.body))
        for (let i = 0; i < BEFORE; i++) {
          const created = yield* post(server.port, "/api/v1/members", key, { name: `Before ${i}`, status: "active" })
          assert.strictEqual(created.status, 201, JSON.stringify(created.body))
        }

        const read = (path: string) =>
          Effect.map(get(server.port, path, key), (r) => {
            assert.strictEqual(r.status, 200, `${path}: ${JSON.stringify(r.body)}`)
            return r.body
          })
        const head = Effect.map(read("/api/v1/changes?after=head"), (body): string => body.meta.next_cursor)
        /** The chamber as the API shows it: the members' total, the feed's events after `after`, the subscription's deliveries. */
        const seen = (after: string) =>
          Effect.gen(function*() {
            const total: number = (yield* read("/api/v1/members")).meta.total
            const events: Array<{ type: string; name: string }> = []
            for (let cursor = after;;) {
              const page = yield* read(`/api/v1/changes?after=${cursor}`)
              for (const e of page.data) events.push({ type: e.type, name: e.data.attributes?.name })
              if (!page.meta.has_more) break
              cursor = page.meta.next_cursor
            }
            const deliveries: number = (yield* read(`/api/v1/hooks/${hook.body.id}/deliveries`)).meta.total
            return { total, events, deliveries }
          })

        const head0 = yield* head
        const before = yield* seen(head0)
        assert.deepStrictEqual(before, { total: BEFORE, events: [], deliveries: BEFORE })
        const big = membersFile("big.json", BIG, "Big")

        // SIGKILL once the import says it is writing: nothing it wrote shows.
        const ms = (since: number) => Math.round(performance.now() - since)
        let t = performance.now()
        const killed = yield* importing(["--tenant", tenant.id, big])
        const killedAt = yield* killed.waitFor(WRITING, 60_000)
        const toKill = ms(t)
        t = performance.now()
        const afterKill = yield* killed.stop("SIGKILL", 10_000)
        const killEnd = ms(t)
        assert.strictEqual(afterKill.signal, "SIGKILL")
        assert.notInclude(afterKill.stdout, "Imported")
        assert.deepStrictEqual(yield* seen(head0), before, "the chamber right after the kill")

        // The next import: its 2 members and their events and deliveries, nothing of the killed one's.
        const small = membersFile("small.json", 2, "Small")
        t = performance.now()
        const smallImport = yield* importing(["--tenant", tenant.id, small, "--json"])
        const smallDone = yield* smallImport.closed
        const smallMs = ms(t)
        assert.strictEqual(smallDone.code, 0, smallDone.stderr)
        assert.deepStrictEqual(yield* seen(head0), {
          total: BEFORE + 2,
          events: [{ type: "member.created", name: "Small 0" }, { type: "member.created", name: "Small 1" }],
          deliveries: BEFORE + 2
        }, "the chamber after the next import")

        // SIGINT once the import says it is writing: it stops, and nothing it wrote shows.
        const head1 = yield* head
        const afterSmall = yield* seen(head1)
        assert.deepStrictEqual(afterSmall, { total: BEFORE + 2, events: [], deliveries: BEFORE + 2 })
        t = performance.now()
        const interrupted = yield* importing(["--tenant", tenant.id, big])
        const interruptedAt = yield* interrupted.waitFor(WRITING, 60_000)
        const toInt = ms(t)
        t = performance.now()
        const afterInt = yield* interrupted.stop("SIGINT", 30_000)
        const intEnd = ms(t)
        console.log(
          `import-killed: SIGKILL ${toKill} ms after the start, at "${killedAt}", ended ${killEnd} ms later; next import of 2 members exit ${smallDone.code} in ${smallMs} ms; ` +
            `SIGINT ${toInt} ms after the start, at "${interruptedAt}", ended ${intEnd} ms later: exit ${afterInt.code}, signal ${afterInt.signal}, ` +
            `stdout ${JSON.stringify(afterInt.stdout)}, stderr ${JSON.stringify(afterInt.stderr)}`
        )
        // Interrupted, it discards what it wrote before it exits 130, saying so: nothing of it stays held.
        assert.strictEqual(afterInt.code, 130, afterInt.stderr)
        assert.include(afterInt.stderr, "Interrupted: nothing of the file was written.")
        assert.notInclude(afterInt.stdout, "Imported")
        assert.deepStrictEqual(yield* seen(head1), afterSmall, "the chamber after the interrupted import")
        // So the chamber's feed is not held back: a member made now is in it at once.
        const after = yield* post(server.port, "/api/v1/members", key, { name: "After", status: "active" })
        assert.strictEqual(after.status, 201, JSON.stringify(after.body))
        assert.deepStrictEqual(yield* seen(head1), { total: BEFORE + 3, events: [{ type: "member.created", name: "After" }], deliveries: BEFORE + 3 })

        // With --json the import's stdout is its one JSON document, also when it has first discarded the killed import.
        assert.deepStrictEqual(jsonDocument(smallDone.stdout)?.counts?.members, 2, `stdout of chamber import --json: ${smallDone.stdout}`)
      }), 120_000)
  })
})
