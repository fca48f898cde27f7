/**
 * The `chamber` program as an operator runs it: a real process per command, on embedded PGlite
 * (a data directory of its own) and on PostgreSQL (a database of its own), with a real server.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { DatabaseConfigRef, runtimes } from "@chamber/pg-adapter/testing"

const BIN = fileURLToPath(new URL("../src/bin.ts", import.meta.url))

interface Result {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

class Env extends Context.Service<Env, Record<string, string>>()("test/CliEnv") {}

/** The environment a runtime's commands run with: DATABASE_URL, or a fresh data directory. */
const envLayer = (rt: ReturnType<typeof runtimes>[number]) =>
  Layer.effect(Env, Effect.gen(function*() {
    const config = yield* DatabaseConfigRef
    if (config._tag === "Postgres") return { DATABASE_URL: config.url } as Record<string, string>
    const dir = yield* Effect.acquireRelease(
      Effect.sync(() => mkdtempSync(join(tmpdir(), "chamber-cli-"))),
      (d) => Effect.sync(() => rmSync(d, { recursive: true, force: true }))
    )
    return { CHAMBER_DATA_DIR: join(dir, "data"), DATABASE_URL: "" }
  })).pipe(Layer.provide(rt.database))

const chamber = (args: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const env = yield* Env
    return yield* Effect.promise(() =>
      new Promise<Result>((resolve) => {
        const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env, NO_COLOR: "1" } })
        let stdout = ""
        let stderr = ""
        child.stdout.on("data", (d) => (stdout += d))
        child.stderr.on("data", (d) => (stderr += d))
        child.on("close", (code) => resolve({ code, stdout, stderr }))
      })
    )
  })

const json = (r: Result) => {
  assert.strictEqual(r.code, 0, `exit ${r.code}: ${r.stderr}`)
  return JSON.parse(r.stdout)
}

const freePort = () =>
  Effect.promise(() =>
    new Promise<number>((resolve) => {
      const s = createServer()
      s.listen(0, "127.0.0.1", () => {
        const port = (s.address() as any).port
        s.close(() => resolve(port))
      })
    })
  )

/** `chamber serve` in the background until the scope closes; resolves once it listens. */
const serving = (port: number) =>
  Effect.gen(function*() {
    const env = yield* Env
    const child = yield* Effect.acquireRelease(
      Effect.sync(() => spawn(process.execPath, [BIN, "serve", "--port", String(port)], { env: { ...process.env, ...env, NO_COLOR: "1" } })),
      (c) => Effect.promise(() => new Promise<void>((resolve) => {
        if (c.exitCode !== null) return resolve()
        c.on("close", () => resolve())
        c.kill("SIGTERM")
      }))
    )
    let out = ""
    child.stdout.on("data", (d) => (out += d))
    child.stderr.on("data", (d) => (out += d))
    yield* Effect.promise(async () => {
      for (let i = 0; i < 300 && !out.includes("Chamber Data API on"); i++) await new Promise((r) => setTimeout(r, 100))
      if (!out.includes("Chamber Data API on")) throw new Error(`serve did not start: ${out}`)
    })
    return child
  })

const get = (port: number, path: string, key: string) =>
  Effect.promise(async () => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { headers: { authorization: `Bearer ${key}` } })
    return { status: res.status, body: await res.json() as any }
  })

for (const rt of runtimes()) {
  describe(`chamber CLI on ${rt.name}`, () => {
    layer(envLayer(rt), { timeout: 180_000 })((it) => {
      it.effect("administers chambers and keys; only a chamber_admin mints; a revoked key gets 401 from the running server", () =>
        Effect.gen(function*() {
          // A fresh database gets every migration, the foundation first; a second run has nothing to do.
          const applied = json(yield* chamber(["migrate", "--json"]))
          assert.deepStrictEqual(applied.applied[0], { id: 1, name: "foundation" })
          assert.deepStrictEqual(json(yield* chamber(["migrate", "--json"])), { applied: [] })

          const tenant = json(yield* chamber(["tenant", "create", "--name", "Lakeside Chamber", "--website", "https://lakeside.example", "--json"]))
          assert.match(tenant.id, /^chm_/)
          assert.deepInclude(tenant, { name: "Lakeside Chamber", website: "https://lakeside.example", currency: "USD", invoice_prefix: "INV-", net_terms: 30 })

          const port = yield* freePort()
          yield* serving(port)
          // Everything below reaches the data through the running server's database.
          if (rt.name === "pglite") {
            // A second server cannot share an embedded data directory.
            const second = yield* chamber(["serve", "--port", String(yield* freePort()), "--json"])
            assert.strictEqual(second.code, 1)
            assert.match(JSON.parse(second.stderr).error, /in use/)
          }

          const listed = json(yield* chamber(["tenant", "list", "--json"]))
          assert.deepStrictEqual(listed.map((t: any) => t.id), [tenant.id])

          const admin = json(yield* chamber(["user", "add", "--tenant", tenant.id, "--email", "Ann@Lakeside.example", "--role", "chamber_admin", "--json"]))
          assert.deepInclude(admin, { email: "ann@lakeside.example", role: "chamber_admin", tenant: tenant.id })
          json(yield* chamber(["user", "add", "--tenant", tenant.id, "--email", "sam@lakeside.example", "--role", "staff", "--json"]))

          const refused = yield* chamber(["key", "mint", "--tenant", tenant.id, "--as", "sam@lakeside.example", "--name", "x", "--scopes", "all", "--json"])
          assert.strictEqual(refused.code, 1)
          assert.strictEqual(refused.stdout, "")
          assert.match(JSON.parse(refused.stderr).error, /not a chamber_admin/)
          const stranger = yield* chamber(["key", "mint", "--tenant", tenant.id, "--as", "nobody@x.example", "--name", "x", "--scopes", "all", "--json"])
          assert.strictEqual(stranger.code, 1)
          assert.match(JSON.parse(stranger.stderr).error, /nobody@x\.example is not a chamber_admin/)

          // Numbers are checked before they reach the database: a clear message, not a driver error.
          for (const limit of ["2147483648", "0", "-5", "1.5", "lots"]) {
            const bad = yield* chamber(["key", "mint", "--tenant", tenant.id, "--as", "ann@lakeside.example", "--name", "x", "--scopes", "read", "--daily-limit", limit, "--json"])
            assert.deepStrictEqual([bad.code, bad.stdout, JSON.parse(bad.stderr)], [1, "", {
              error: "The daily limit must be a whole number from 1 to 2147483647."
            }], `--daily-limit ${limit}`)
          }
          const terms = yield* chamber(["tenant", "create", "--name", "Odd Terms", "--net-terms", "99999999999", "--json"])
          assert.deepStrictEqual([terms.code, JSON.parse(terms.stderr)], [1, { error: "The net terms must be a whole number of days between 0 and 365." }])

          const minted = json(yield* chamber(["key", "mint", "--tenant", tenant.id, "--as", "ann@lakeside.example", "--name", "Zapier", "--scopes", "read", "--json"]))
          assert.match(minted.key, /^cck_[0-9A-Za-z]{40}$/)
          assert.strictEqual(minted.prefix, minted.key.slice(0, 12))
          // `read` is every :read scope except the opt-in bookings:read.
          assert.deepStrictEqual(minted.scopes, [
            "members:read", "contacts:read", "events:read", "registrations:read", "deals:read", "invoices:read",
            "payments:read", "sponsorships:read", "placements:read"
          ])

          const me = yield* get(port, "/api/v1/me", minted.key)
          assert.strictEqual(me.status, 200)
          assert.strictEqual(me.body.label, "Lakeside Chamber (Zapier)")

          const keys = json(yield* chamber(["key", "list", "--tenant", tenant.id, "--json"]))
          assert.strictEqual(keys.length, 1)
          assert.notInclude(JSON.stringify(keys), minted.key)
          assert.deepInclude(keys[0], { name: "Zapier", prefix: minted.prefix, revoked_at: null })
          assert.isNotNull(keys[0].last_used_at, "the request above counts as a use of the key")

          const field = json(yield* chamber(["field", "add", "--tenant", tenant.id, "--resource", "member", "--key", "tier", "--label", "Tier", "--api-visible", "--json"]))
          assert.deepInclude(field, { resource: "member", key: "tier", api_visible: true })
          const dupField = yield* chamber(["field", "add", "--tenant", tenant.id, "--resource", "member", "--key", "tier", "--label", "Tier", "--json"])
          assert.strictEqual(dupField.code, 1)

          const revoked = json(yield* chamber(["key", "revoke", minted.prefix, "--json"]))
          assert.strictEqual(revoked.revoked[0].prefix, minted.prefix)
          const after = yield* get(port, "/api/v1/me", minted.key)
          assert.deepStrictEqual(after, { status: 401, body: { message: "Unauthenticated." } })
          assert.isNotNull(json(yield* chamber(["key", "list", "--tenant", tenant.id, "--json"]))[0].revoked_at)

          const unknown = yield* chamber(["key", "revoke", "cck_nothere", "--json"])
          assert.strictEqual(unknown.code, 1)
          assert.strictEqual(unknown.stdout, "")
          assert.deepStrictEqual(JSON.parse(unknown.stderr), { error: "No live key with the prefix cck_nothere." })
        }), 180_000)

      it.effect("demo seeds only an empty database and prints a working key", () =>
        Effect.gen(function*() {
          // This suite's database already holds the chamber made above: demo must change nothing.
          const skipped = json(yield* chamber(["demo", "--json"]))
          assert.deepStrictEqual([skipped.tenant, skipped.key], [null, null])
          assert.match(skipped.message, /already has data/)
        }), 60_000)
    })
  })
}

describe("chamber demo on an empty embedded database", () => {
  const dir = mkdtempSync(join(tmpdir(), "chamber-demo-"))
  layer(Layer.succeed(Env)({ CHAMBER_DATA_DIR: join(dir, "data"), DATABASE_URL: "" }), { timeout: 180_000 })((it) => {
    it.effect("creates a chamber with at least 150 members and a key with every scope", () =>
      Effect.gen(function*() {
        const demo = json(yield* chamber(["demo", "--json"]))
        assert.match(demo.key, /^cck_[0-9A-Za-z]{40}$/)
        assert.match(demo.tenant.id, /^chm_/)
        const port = yield* freePort()
        yield* serving(port)
        const page = yield* get(port, "/api/v1/members?page=2", demo.key)
        assert.strictEqual(page.status, 200)
        assert.isAtLeast(page.body.meta.total, 150)
        assert.strictEqual(page.body.meta.current_page, 2)
        const me = yield* get(port, "/api/v1/me", demo.key)
        assert.strictEqual(me.body.key.scopes.length, 17)
        const again = json(yield* chamber(["demo", "--json"]))
        assert.isNull(again.key)
      }).pipe(Effect.ensuring(Effect.sync(() => rmSync(dir, { recursive: true, force: true })))), 120_000)
  })
})
