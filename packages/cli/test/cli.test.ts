/**
 * The `chamber` program as an operator runs it: a real process per command, on embedded PGlite
 * (a data directory of its own) and on PostgreSQL (a database of its own), with a real server.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { join } from "node:path"
import { ALL_SCOPES, READ_SCOPES } from "@chamber/core"
import { runtimes } from "@chamber/pg-adapter/testing"
import { chamber, chambers, Env, envLayer, get, json, post, type Result, serving } from "./harness.ts"
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
          // Commands that do not depend on one another go together (chambers: side by side on PostgreSQL).
          const [listing, second] = yield* chambers([["tenant", "list", "--json"], ...(rt.name === "pglite" ? [["serve", "--port", "0", "--json"]] : [])])
          if (second !== undefined) {
            // A second server cannot share an embedded data directory.
            assert.strictEqual(second.code, 1)
            assert.match(JSON.parse(second.stderr).error, /in use/)
          }
          const listed = json(listing!)
          assert.deepStrictEqual(listed.map((t: any) => t.id), [tenant.id])

          const admin = json(yield* chamber(["user", "add", "--tenant", tenant.id, "--email", "Ann@Lakeside.example", "--role", "chamber_admin", "--json"]))
          assert.deepInclude(admin, { email: "ann@lakeside.example", role: "chamber_admin", tenant: tenant.id })
          json(yield* chamber(["user", "add", "--tenant", tenant.id, "--email", "sam@lakeside.example", "--role", "staff", "--json"]))

          // `user list`: the chamber's people, oldest first; a table for people.
          const [peopleJson, peopleTable, noChamber] = yield* chambers([
            ["user", "list", "--tenant", tenant.id, "--json"],
            ["user", "list", "--tenant", tenant.id],
            ["user", "list", "--tenant", "chm_nothere", "--json"]
          ])
          const people = json(peopleJson!)
          assert.deepStrictEqual(people.map((u: Record<string, unknown>) => Object.keys(u).sort()), [
            ["created_at", "email", "id", "role", "tenant"],
            ["created_at", "email", "id", "role", "tenant"]
          ])
          assert.deepStrictEqual(people.map((u: Record<string, unknown>) => [u.id, u.email, u.role, u.tenant, u.created_at]), [
            [admin.id, "ann@lakeside.example", "chamber_admin", tenant.id, admin.created_at],
            [people[1].id, "sam@lakeside.example", "staff", tenant.id, people[1].created_at]
          ])
          assert.strictEqual(peopleTable!.code, 0)
          assert.match(peopleTable!.stdout, /^id\s+email\s+role\s+created_at\n/)
          assert.match(peopleTable!.stdout, /\n\d+\s+ann@lakeside\.example\s+chamber_admin\s+\d{4}-/)
          assert.deepStrictEqual([noChamber!.code, noChamber!.stdout], [1, ""])
          assert.match(JSON.parse(noChamber!.stderr).error, /chm_nothere/)

          const limits = ["2147483648", "0", "-5", "1.5", "lots"]
          const [refused, stranger, terms, ...bads] = yield* chambers([
            ["key", "mint", "--tenant", tenant.id, "--as", "sam@lakeside.example", "--name", "x", "--scopes", "all", "--json"],
            ["key", "mint", "--tenant", tenant.id, "--as", "nobody@x.example", "--name", "x", "--scopes", "all", "--json"],
            ["tenant", "create", "--name", "Odd Terms", "--net-terms", "99999999999", "--json"],
            ...limits.map((limit) => ["key", "mint", "--tenant", tenant.id, "--as", "ann@lakeside.example", "--name", "x", "--scopes", "read", "--daily-limit", limit, "--json"])
          ])
          assert.strictEqual(refused!.code, 1)
          assert.strictEqual(refused!.stdout, "")
          assert.match(JSON.parse(refused!.stderr).error, /not a chamber_admin/)
          assert.strictEqual(stranger!.code, 1)
          assert.match(JSON.parse(stranger!.stderr).error, /nobody@x\.example is not a chamber_admin/)

          // Numbers are checked before they reach the database: a clear message, not a driver error.
          bads.forEach((bad, i) =>
            assert.deepStrictEqual([bad.code, bad.stdout, JSON.parse(bad.stderr)], [1, "", {
              error: "The daily limit must be a whole number from 1 to 2147483647."
            }], `--daily-limit ${limits[i]}`)
          )
          assert.deepStrictEqual([terms!.code, JSON.parse(terms!.stderr)], [1, { error: "The net terms must be a whole number of days between 0 and 365." }])

          const minted = json(yield* chamber(["key", "mint", "--tenant", tenant.id, "--as", "ann@lakeside.example", "--name", "Zapier", "--scopes", "read", "--json"]))
          assert.match(minted.key, /^cck_[0-9A-Za-z]{40}$/)
          assert.strictEqual(minted.prefix, minted.key.slice(0, 12))
          // `read` is every :read scope except the opt-in bookings:read.
          assert.deepStrictEqual(minted.scopes, ALL_SCOPES.filter((s) => s.endsWith(":read") && s !== "bookings:read"))

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
          const [keysAfter, unknown] = yield* chambers([["key", "list", "--tenant", tenant.id, "--json"], ["key", "revoke", "cck_N0tHere1", "--json"]])
          assert.isNotNull(json(keysAfter!)[0].revoked_at)
          assert.strictEqual(unknown!.code, 1)
          assert.strictEqual(unknown!.stdout, "")
          assert.deepStrictEqual(JSON.parse(unknown!.stderr), { error: "No live key with the prefix cck_N0tHere1." })
        }), 180_000)

      it.effect("says what is wrong with what an operator typed, and what is already so", () =>
        Effect.gen(function*() {
          /** A refusal: exit 1, nothing on stdout, the message on stderr (`{"error"}` with --json). */
          const refused = (r: Result) => {
            assert.deepStrictEqual([r.code, r.stdout], [1, ""], r.stderr)
            return r.stderr.startsWith("{") ? JSON.parse(r.stderr).error as string : r.stderr
          }
          // Through a running server's database, as an operator beside it would.
          const { port } = yield* serving()
          const tenant = json(yield* chamber(["tenant", "create", "--name", "Errata Chamber", "--json"]))
          json(yield* chamber(["user", "add", "--tenant", tenant.id, "--email", "ed@errata.example", "--role", "chamber_admin", "--json"]))
          const mint = (scopes: string, ...more: ReadonlyArray<string>) =>
            chamber(["key", "mint", "--tenant", tenant.id, "--as", "ed@errata.example", "--name", "Typo", "--scopes", scopes, ...more])

          const mintArgs = (scopes: string, ...more: ReadonlyArray<string>) =>
            ["key", "mint", "--tenant", tenant.id, "--as", "ed@errata.example", "--name", "Typo", "--scopes", scopes, ...more]
          const prefixRule = "is not a key prefix: a prefix is cck_ and 8 letters or digits, as key list shows it (e.g. cck_Xy12Ab34)."
          const typed = yield* chambers([
            // A delivery no row has is named, and nothing is queued (it was "Queued again 0", exit 0).
            ["deliveries", "replay", "99999", "--json"],
            ["deliveries", "replay", "99998", "99999"],
            ["deliveries", "replay", "--hook", "99999", "--failed", "--json"],
            // An option whose value is missing says so, whatever follows it (--json was taken for the chamber).
            ["key", "list", "--tenant", "--json"],
            ["hooks", "list", "--tenant", "--json"],
            // A mistyped scope gets the scope it most likely meant; nothing is minted.
            mintArgs("members:reed", "--json"),
            mintArgs("read,Hooks:Write,everything"),
            // A website is a full http(s) URL.
            ["tenant", "create", "--name", "Bad Site", "--website", "lakeside.example", "--json"],
            ...["ftp://lakeside.example", "https://lake side.example"].map((website) => ["tenant", "create", "--name", "Bad Site", "--website", website, "--json"])
          ])
          assert.deepStrictEqual(typed.map(refused), [
            "No delivery 99999.",
            "error: No deliveries 99998, 99999.\n",
            "No webhook subscription 99999.",
            "option '--tenant <id>' argument missing",
            "option '--tenant <id>' argument missing",
            "Unknown scope members:reed: did you mean members:read?",
            "error: Unknown scopes: Hooks:Write (did you mean hooks:write?), everything.\n",
            "The website must be a full http or https URL: did you mean https://lakeside.example?",
            "The website must be a full http or https URL, such as https://lakeside.example.",
            "The website must be a full http or https URL, such as https://lakeside.example."
          ])
          const [noKeys, tenants] = yield* chambers([["key", "list", "--tenant", tenant.id, "--json"], ["tenant", "list", "--json"]])
          assert.deepStrictEqual(json(noKeys!), [])
          assert.notInclude(json(tenants!).map((t: { name: string }) => t.name), "Bad Site")

          // A prefix that is no prefix says what a prefix is; a whole key is not echoed back.
          const key = json(yield* mint("all", "--json"))
          const [short, whole, setLimit, good] = yield* chambers([
            ["key", "revoke", "cck_short", "--json"],
            ["key", "revoke", key.key, "--json"],
            ["key", "set-limit", "Xy12Ab34", "--daily", "5", "--json"],
            ["tenant", "create", "--name", "Good Site", "--website", "http://good.example/chamber", "--json"]
          ])
          assert.strictEqual(refused(short!), `"cck_short" ${prefixRule}`)
          assert.strictEqual(refused(whole!), `That is a whole key, not its prefix: give its first 12 characters, ${key.prefix}.`)
          assert.strictEqual(refused(setLimit!), `"Xy12Ab34" ${prefixRule}`)
          assert.deepInclude(json(good!), { website: "http://good.example/chamber" })
          assert.isNull(json(yield* chamber(["key", "list", "--tenant", tenant.id, "--json"]))[0].revoked_at)

          // key list shows a whole scope set as the TUI does; --json keeps every scope.
          for (const minted of yield* chambers([mintArgs("read", "--json"), mintArgs("members:read,hooks:write", "--json")])) json(minted)
          const [listed, listedJson] = yield* chambers([["key", "list", "--tenant", tenant.id], ["key", "list", "--tenant", tenant.id, "--json"]])
          assert.strictEqual(listed!.code, 0)
          assert.match(listed!.stdout, new RegExp(`\\n\\d+ +Typo +cck_\\w{8} +all \\(${ALL_SCOPES.length}\\) +\\d{4}-`))
          assert.match(listed!.stdout, new RegExp(`\\n\\d+ +Typo +cck_\\w{8} +read \\(${READ_SCOPES.length}\\) +\\d{4}-`))
          // Another set is listed whole, in the canonical order.
          assert.match(listed!.stdout, /\n\d+ +Typo +cck_\w{8} +members:read,hooks:write +\d{4}-/)
          assert.lengthOf(json(listedJson!)[0].scopes, ALL_SCOPES.length)

          // Reactivating an active subscription says it already was; a missing one is named.
          const hook = yield* post(port, "/api/v1/hooks", key.key, { url: "https://receiver.errata.example/in", events: ["member.created"] })
          assert.strictEqual(hook.status, 201, JSON.stringify(hook.body))
          const [again, text, missing] = yield* chambers([
            ["hooks", "reactivate", String(hook.body.id), "--json"],
            ["hooks", "reactivate", String(hook.body.id)],
            ["hooks", "reactivate", "99999", "--json"]
          ])
          assert.deepInclude(json(again!), { id: hook.body.id, active: true, failure_count: 0, already_active: true })
          assert.deepStrictEqual([text!.code, text!.stdout], [0, "https://receiver.errata.example/in was already active, with no failures to reset: nothing changed.\n"])
          assert.strictEqual(refused(missing!), "No webhook subscription 99999.")
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
        assert.strictEqual(me.body.key.scopes.length, ALL_SCOPES.length)
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
