/**
 * The API of `chamber serve` on the embedded database while `chamber import` writes 10,000 members
 * through the server's socket (docs/cli.md "While it writes"): reads, one after another and side
 * by side, keep answering within a second, and each sees the chamber as it stood before the import
 * or as it stands after it, never part of it; afterwards the change feed holds the import's
 * member.created events after the earlier ones, in file order, and a subscription to them has a
 * delivery queued for each.
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

const dir = suiteDir("import-serving")
const IMPORTED = 10_000
const BEFORE = 3
/** Pollers side by side; each sends its next request this long after the last one answered. */
const POLLERS = 3
const PACE_MS = 20
const SLOWEST_READ_MS = 1_000
const LONGEST_503_RUN_MS = 2_000
const POLLS_DURING_IMPORT = 20

interface Poll {
  readonly poller: number
  readonly path: "/api/v1/me" | "/api/v1/members"
  /** Milliseconds since the test's clock started. */
  readonly start: number
  readonly ms: number
  /** The HTTP status, or 0 when no answer came (the connection failed or timed out). */
  readonly status: number
  /** `meta.total` of a 200 from /members. */
  readonly total?: number
}

const clock = performance.now()
const now = () => performance.now() - clock

/** One read with the key, timed from before it is sent until its body is read. */
const poll = (port: number, key: string, poller: number, path: Poll["path"]) =>
  Effect.promise(async (): Promise<Poll> => {
    const start = now()
    try {
      const res = await fetch(`http://127.0.0.1:${port}${path}`, {
        headers: { authorization: `Bearer ${key}` },
        signal: AbortSignal.timeout(30_000)
      })
      const body = await res.json() as any
      const total = path === "/api/v1/members" && res.status === 200 ? body.meta.total as number : undefined
      return { poller, path, start, ms: now() - start, status: res.status, ...(total === undefined ? {} : { total }) }
    } catch {
      return { poller, path, start, ms: now() - start, status: 0 }
    }
  })

/** The longest stretch in which every request answered 503: from the first one's start to the end of the last, in start order. */
const longest503Run = (polls: ReadonlyArray<Poll>) => {
  let longest = 0
  let runStart: number | undefined
  let runEnd = 0
  for (const p of [...polls].sort((a, b) => a.start - b.start)) {
    if (p.status === 503) {
      runStart ??= p.start
      runEnd = Math.max(runEnd, p.start + p.ms)
      longest = Math.max(longest, runEnd - runStart)
    } else runStart = undefined
  }
  return Math.round(longest)
}

describe("the API while chamber import writes on the embedded database", () => {
  layer(envLayer(pgliteRuntime), { timeout: 120_000, excludeTestServices: true })((it) => {
    it.effect("10,000 members imported through the server's socket: reads answer within 1 s and see none or all of them; the feed and the deliveries have them all", () =>
      Effect.gen(function*() {
        const server = yield* serving(["--no-relay"], { CHAMBER_RATE_LIMIT_PER_MINUTE: "1000000" })
        const tenant = json(yield* chamber(["tenant", "create", "--name", "Busy Chamber", "--admin", "ops@busy.example", "--json"]))
        const mint = (name: string, scopes: string) =>
          chamber(["key", "mint", "--tenant", tenant.id, "--as", "ops@busy.example", "--name", name, "--scopes", scopes, "--daily-limit", "1000000", "--json"])
        const admin: string = json(yield* mint("setup", "all")).key
        const reader: string = json(yield* mint("reader", "read")).key

        // A subscription to member.created (no relay runs: its deliveries stay queued), then the members before the import.
        const hook = yield* post(server.port, "/api/v1/hooks", admin, { url: "https://hooks.example.com/import-serving", events: ["member.created"] })
        assert.strictEqual(hook.status, 201, JSON.stringify(hook.body))
        for (let i = 0; i < BEFORE; i++) {
          const created = yield* post(server.port, "/api/v1/members", admin, { name: `Before ${i}`, status: "active" })
          assert.strictEqual(created.status, 201, JSON.stringify(created.body))
        }
        assert.strictEqual((yield* get(server.port, "/api/v1/members", reader)).body.meta.total, BEFORE)

        const file = join(dir, "members.json")
        writeFileSync(file, JSON.stringify({
          members: Array.from({ length: IMPORTED }, (_, i) => ({ ref: `m${i}`, name: `Imported ${i}`, status: "active", email: `m${i}@busy.example` }))
        }))

        // The import as a process of its own, and the pollers until it has ended.
        const env = yield* Env
        let ended = false
        const importing = Effect.promise(() =>
          new Promise<{ code: number | null; stdout: string; stderr: string; start: number; end: number }>((resolve) => {
            const start = now()
            const child = spawn(process.execPath, [BIN, "import", "--tenant", tenant.id, file, "--json"], {
              env: { ...process.env, REDIS_URL: "", ...env, NO_COLOR: "1" }
            })
            let stdout = ""
            let stderr = ""
            child.stdout.on("data", (d) => (stdout += d))
            child.stderr.on("data", (d) => (stderr += d))
            child.on("close", (code) => {
              ended = true
              resolve({ code, stdout, stderr, start, end: now() })
            })
          })
        )
        const polls: Array<Poll> = []
        const poller = (n: number) =>
          Effect.gen(function*() {
            for (let i = n; !ended; i++) {
              polls.push(yield* poll(server.port, reader, n, i % 2 === 0 ? "/api/v1/me" : "/api/v1/members"))
              yield* Effect.sleep(PACE_MS)
            }
          })
        const [imported] = yield* Effect.all([importing, ...Array.from({ length: POLLERS }, (_, n) => poller(n))], { concurrency: "unbounded" })

        const during = polls.filter((p) => p.start >= imported.start && p.start < imported.end)
        const maxMs = Math.round(Math.max(...polls.map((p) => p.ms)))
        const run503 = longest503Run(polls)
        const statuses: Record<number, number> = {}
        for (const p of polls) statuses[p.status] = (statuses[p.status] ?? 0) + 1
        const totals: Record<number, number> = {}
        for (const p of polls) if (p.total !== undefined) totals[p.total] = (totals[p.total] ?? 0) + 1
        console.log(
          `import-serving: import exit ${imported.code} in ${Math.round(imported.end - imported.start)} ms; ${polls.length} polls ` +
            `(${during.length} started during the import, ${POLLERS} pollers), max read ${maxMs} ms, ` +
            `reads over ${SLOWEST_READ_MS} ms ${polls.filter((p) => p.ms > SLOWEST_READ_MS).length}, longest 503 run ${run503} ms, ` +
            `statuses ${JSON.stringify(statuses)}, /members totals ${JSON.stringify(totals)}`
        )

        assert.strictEqual(imported.code, 0, imported.stderr)
        assert.strictEqual(json(imported).counts.members, IMPORTED)
        assert.isAtLeast(during.length, POLLS_DURING_IMPORT, "polls started while the import ran")
        for (const p of polls) assert.include([200, 503], p.status, `${p.path} at ${Math.round(p.start)} ms`)
        assert.isAtMost(maxMs, SLOWEST_READ_MS, "the slowest read, in ms")
        assert.isAtMost(run503, LONGEST_503_RUN_MS, "the longest run of 503s, in ms")
        // All or nothing, and once all, never nothing again.
        const seen = polls.filter((p) => p.total !== undefined)
        for (const p of seen) assert.include([BEFORE, BEFORE + IMPORTED], p.total, `/members total at ${Math.round(p.start)} ms`)
        const firstAll = Math.min(...seen.filter((p) => p.total === BEFORE + IMPORTED).map((p) => p.start + p.ms))
        for (const p of seen) if (p.start > firstAll) assert.strictEqual(p.total, BEFORE + IMPORTED, `/members total at ${Math.round(p.start)} ms, after the whole import was seen`)

        // Afterwards: every member, the feed's member.created events in order, a delivery queued for each.
        assert.strictEqual((yield* get(server.port, "/api/v1/members", reader)).body.meta.total, BEFORE + IMPORTED)
        const names: Array<string> = []
        for (let after: string | undefined = undefined;;) {
          const page: { status: number; body: any } = yield* get(server.port, `/api/v1/changes?types=member.created${after === undefined ? "" : `&after=${after}`}`, reader)
          assert.strictEqual(page.status, 200, JSON.stringify(page.body))
          for (const event of page.body.data) names.push(event.data.attributes.name)
          after = page.body.meta.next_cursor
          if (!page.body.meta.has_more) break
        }
        assert.strictEqual(names.length, BEFORE + IMPORTED)
        assert.deepStrictEqual(names, [
          ...Array.from({ length: BEFORE }, (_, i) => `Before ${i}`),
          ...Array.from({ length: IMPORTED }, (_, i) => `Imported ${i}`)
        ])
        const queued = yield* get(server.port, `/api/v1/hooks/${hook.body.id}/deliveries?status=pending`, admin)
        assert.strictEqual(queued.status, 200, JSON.stringify(queued.body))
        assert.strictEqual(queued.body.meta.total, BEFORE + IMPORTED)
      }), 120_000)
  })
})
