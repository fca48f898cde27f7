/**
 * The `chamber` program as an operator runs it: a real process per command, on embedded PGlite
 * (a data directory of its own) and on PostgreSQL (a database of its own), with a real server.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { join } from "node:path"
import { runtimes } from "@chamber/pg-adapter/testing"
import { chamber, Env, envLayer, get, json, serving } from "./harness.ts"
import { suiteDir } from "./tempDirs.ts"

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

          const { port } = yield* serving()
          // Everything below reaches the data through the running server's database.
          if (rt.name === "pglite") {
            // A second server cannot share an embedded data directory.
            const second = yield* chamber(["serve", "--port", "0", "--json"])
            assert.strictEqual(second.code, 1)
            assert.match(JSON.parse(second.stderr).error, /in use/)
          }

          const listed = json(yield* chamber(["tenant", "list", "--json"]))
          assert.deepStrictEqual(listed.map((t: any) => t.id), [tenant.id])

          const admin = json(yield* chamber(["user", "add", "--tenant", tenant.id, "--email", "Ann@Lakeside.example", "--role", "chamber_admin", "--json"]))
          assert.deepInclude(admin, { email: "ann@lakeside.example", role: "chamber_admin", tenant: tenant.id })
          json(yield* chamber(["user", "add", "--tenant", tenant.id, "--email", "sam@lakeside.example", "--role", "staff", "--json"]))

          // `user list`: the chamber's people, oldest first; a table for people.
          const people = json(yield* chamber(["user", "list", "--tenant", tenant.id, "--json"]))
          assert.deepStrictEqual(people.map((u: Record<string, unknown>) => Object.keys(u).sort()), [
            ["created_at", "email", "id", "role", "tenant"],
            ["created_at", "email", "id", "role", "tenant"]
          ])
          assert.deepStrictEqual(people.map((u: Record<string, unknown>) => [u.id, u.email, u.role, u.tenant, u.created_at]), [
            [admin.id, "ann@lakeside.example", "chamber_admin", tenant.id, admin.created_at],
            [people[1].id, "sam@lakeside.example", "staff", tenant.id, people[1].created_at]
          ])
          const peopleTable = yield* chamber(["user", "list", "--tenant", tenant.id])
          assert.strictEqual(peopleTable.code, 0)
          assert.match(peopleTable.stdout, /^id\s+email\s+role\s+created_at\n/)
          assert.match(peopleTable.stdout, /\n\d+\s+ann@lakeside\.example\s+chamber_admin\s+\d{4}-/)
          const noChamber = yield* chamber(["user", "list", "--tenant", "chm_nothere", "--json"])
          assert.deepStrictEqual([noChamber.code, noChamber.stdout], [1, ""])
          assert.match(JSON.parse(noChamber.stderr).error, /chm_nothere/)

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
  const dir = suiteDir("demo")
  layer(Layer.succeed(Env)({ CHAMBER_DATA_DIR: join(dir, "data"), DATABASE_URL: "" }), { timeout: 180_000 })((it) => {
    it.effect("creates a chamber with data in every resource (at least 150 members) and a key with every scope", () =>
      Effect.gen(function*() {
        const demo = json(yield* chamber(["demo", "--json"]))
        assert.match(demo.key, /^cck_[0-9A-Za-z]{40}$/)
        assert.match(demo.tenant.id, /^chm_/)
        const { port } = yield* serving()
        const page = yield* get(port, "/api/v1/members?page=2", demo.key)
        assert.strictEqual(page.status, 200)
        assert.isAtLeast(page.body.meta.total, 150)
        assert.strictEqual(page.body.meta.current_page, 2)
        const me = yield* get(port, "/api/v1/me", demo.key)
        assert.strictEqual(me.body.key.scopes.length, 17)
        // Every resource has realistic rows: invoices in every state, live feeds, registrations.
        const statuses = (path: string) =>
          get(port, path, demo.key).pipe(Effect.map((r) => {
            assert.strictEqual(r.status, 200, path)
            assert.isAbove(r.body.data.length, 0, path)
            return new Set(r.body.data.map((row: { attributes: { status?: string } }) => row.attributes.status))
          }))
        assert.sameMembers([...(yield* statuses("/api/v1/invoices"))], ["draft", "open", "paid", "void", "uncollectible"])
        assert.sameMembers([...(yield* statuses("/api/v1/events"))], ["draft", "published", "cancelled", "completed"])
        assert.sameMembers([...(yield* statuses("/api/v1/deals"))], ["pending", "approved", "rejected"])
        for (const path of ["/api/v1/contacts", "/api/v1/payments", "/api/v1/sponsorships", "/api/v1/placements", "/api/v1/bookings"]) yield* statuses(path)
        const events: Array<{ id: number }> = (yield* get(port, "/api/v1/events", demo.key)).body.data
        const registered = yield* Effect.forEach(events, (e) => get(port, `/api/v1/events/${e.id}/registrations`, demo.key))
        assert.isAbove(registered.reduce((n: number, r) => n + (r.body.meta.total as number), 0), 0)
        const again = json(yield* chamber(["demo", "--json"]))
        assert.isNull(again.key)
      }), 120_000)
  })
})
