/**
 * `chamber tenant delete` as an operator runs it (docs/cli.md "Deleting a chamber", docs/operations.md
 * "Offboarding a chamber"), beside a running server, on embedded PGlite (through the server's
 * socket) and on PostgreSQL: a wrong --confirm and a dry run change nothing; a removal stops the
 * chamber's keys at once, is killed half-way, and a second run finishes it; afterwards no table
 * holds a row of it or names it, and the other chamber's rows are all still there.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import pg from "pg"
import { runtimes } from "@chamber/pg-adapter/testing"
import { demoDocument } from "../src/demo/DemoDocument.ts"
import { BIN, chamber, chambers, Env, envLayer, get, json, post, serving } from "./harness.ts"
import { receiverWithTrust } from "./hookFixtures.ts"
import { suiteDir } from "./tempDirs.ts"

const dir = suiteDir("tenant-delete")
const demoFile = join(dir, "demo.json")
writeFileSync(demoFile, JSON.stringify(demoDocument()))

/** A connection of the test's own to the suite's database: PostgreSQL's, or the running server's embedded one through its socket. */
const query = <A>(use: (client: pg.Client) => Promise<A>) =>
  Effect.flatMap(Env, (env) =>
    Effect.promise(async () => {
      const client = env.DATABASE_URL
        ? new pg.Client({ connectionString: env.DATABASE_URL })
        : new pg.Client({ host: env.CHAMBER_DATA_DIR, port: 5432, user: "postgres", database: "postgres" })
      await client.connect()
      try {
        return await use(client)
      } finally {
        await client.end()
      }
    }))

/** Every table of the schema, and those with a `tenant_id` column, read from the catalogue. */
const catalogue = async (client: pg.Client) => {
  const tables = await client.query<{ name: string; tenant: boolean }>(`
    SELECT c.relname AS name, EXISTS (
      SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'tenant_id' AND NOT a.attisdropped
    ) AS tenant
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') ORDER BY 1`)
  return { all: tables.rows.map((t) => t.name), holding: tables.rows.filter((t) => t.tenant).map((t) => t.name) }
}

const internalId = (publicId: string) =>
  query(async (c) => (await c.query<{ id: string }>("SELECT id::text FROM tenants WHERE public_id = $1", [publicId])).rows[0]?.id)

/** The chamber's rows in every table with a `tenant_id`, and its saved rate-limit windows. */
const rowsOf = (tenantId: string, publicId: string) =>
  query(async (c) => {
    const counts: Record<string, number> = {}
    for (const table of (await catalogue(c)).holding) {
      counts[table] = Number((await c.query(`SELECT count(*) AS n FROM "${table}" WHERE tenant_id = $1`, [tenantId])).rows[0].n)
    }
    counts.rate_limit_windows = Number(
      (await c.query("SELECT count(*) AS n FROM rate_limit_windows WHERE starts_with(key, $1)", [`${publicId}:`])).rows[0].n
    )
    return counts
  })

/** Rows of any table whose text names the chamber's public id (besides its tenant row, while there). */
const mentionsOf = (publicId: string) =>
  query(async (c) => {
    const found: Record<string, number> = {}
    for (const table of (await catalogue(c)).all) {
      const n = Number((await c.query(`SELECT count(*) AS n FROM "${table}" t WHERE strpos(t::text, $1) > 0`, [publicId])).rows[0].n)
      if (n > 0) found[table] = n
    }
    return found
  })

const sum = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0)

/** A chamber with rows in every table a chamber fills: the demo records, fields, people, a key, a delivered webhook, an idempotent write, counted requests. */
const filledChamber = (port: number, receiverUrl: string, name: string) =>
  Effect.gen(function*() {
    const tenant = json(yield* chamber(["tenant", "create", "--name", name, "--json"]))
    // What does not depend on one another, side by side: the people and fields, then the import (of values for those fields) and the key.
    const fields = [["membership_tier", true], ["board_notes", false]] as const
    const setUp = yield* chambers([
      ["user", "add", "--tenant", tenant.id, "--email", "admin@leaving.example", "--role", "chamber_admin", "--json"],
      ...fields.map(([key, visible]) => ["field", "add", "--tenant", tenant.id, "--resource", "member", "--key", key, "--label", key, ...(visible ? ["--api-visible"] : []), "--json"])
    ])
    setUp.forEach(json)
    const [imported, minted] = yield* chambers([
      ["import", "--tenant", tenant.id, demoFile, "--json"],
      ["key", "mint", "--tenant", tenant.id, "--as", "admin@leaving.example", "--name", "all", "--scopes", "all", "--json"]
    ])
    json(imported!)
    const key: string = json(minted!).key
    const hook = yield* post(port, "/api/v1/hooks", key, { url: `${receiverUrl}/${tenant.id}`, events: ["member.created"] })
    assert.strictEqual(hook.status, 201, JSON.stringify(hook.body))
    const created = yield* Effect.promise(() =>
      fetch(`http://127.0.0.1:${port}/api/v1/members`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "idempotency-key": `first-${tenant.id}` },
        body: JSON.stringify({ name: `Newest of ${name}`, status: "active" })
      })
    )
    assert.strictEqual(created.status, 201)
    assert.strictEqual((yield* get(port, "/api/v1/members", key)).status, 200)
    return { id: tenant.id as string, name, key, internal: (yield* internalId(tenant.id))! }
  })

/** Polls `check` until it holds, for at most `ms`. */
const until = <E, R>(what: string, check: Effect.Effect<boolean, E, R>, ms = 30_000) =>
  Effect.gen(function*() {
    const deadline = Date.now() + ms
    while (!(yield* check)) {
      if (Date.now() > deadline) return yield* Effect.die(new Error(`timed out waiting for ${what}`))
      yield* Effect.sleep(25)
    }
  })

for (const rt of runtimes()) {
  describe(`chamber tenant delete on ${rt.name}`, () => {
    layer(envLayer(rt), { timeout: 420_000, excludeTestServices: true })((it) => {
      it.effect("refuses a wrong name, counts in a dry run, stops the keys at once, finishes after a kill, and leaves nothing of the chamber", () =>
        Effect.gen(function*() {
          const { env: trust, receiver } = yield* receiverWithTrust
          const server = yield* serving([], trust)
          const [staying, leaving] = yield* Effect.all([
            filledChamber(server.port, receiver.url, "Staying Chamber"),
            filledChamber(server.port, receiver.url, "Leaving Chamber")
          ], { concurrency: rt.name === "postgres" ? 2 : 1 })
          // Each chamber's member.created delivered (an attempt recorded), and its requests' counts saved.
          yield* Effect.promise(() => receiver.waitFor(2, 30_000))
          yield* until(
            "saved deliveries and rate-limit windows",
            Effect.map(
              Effect.all([rowsOf(staying.internal, staying.id), rowsOf(leaving.internal, leaving.id)]),
              (both) => both.every((c) => c.webhook_attempts! > 0 && c.rate_limit_windows! > 0)
            )
          )
          const stayingBefore = yield* rowsOf(staying.internal, staying.id)
          const leavingBefore = yield* rowsOf(leaving.internal, leaving.id)
          for (const table of ["members", "member_names", "member_counts", "contacts", "outbox_events", "api_keys", "users", "custom_field_definitions",
            "webhook_subscriptions", "webhook_deliveries", "webhook_attempts", "idempotency_keys", "invoice_lines", "bookings", "rate_limit_windows"]) {
            assert.isAbove(leavingBefore[table]!, 0, `the leaving chamber has rows in ${table}`)
          }

          // A wrong name: a clear error; a dry run: the counts. Nothing changed by either.
          const [wrong, dryJson, dryText] = yield* chambers([
            ["tenant", "delete", leaving.id, "--confirm", "leaving chamber", "--json"],
            ["tenant", "delete", leaving.id, "--confirm", "Leaving Chamber", "--dry-run", "--json"],
            ["tenant", "delete", leaving.id, "--confirm", "Leaving Chamber", "--dry-run"]
          ])
          assert.strictEqual(wrong!.code, 1)
          assert.strictEqual(wrong!.stdout, "")
          assert.deepStrictEqual(JSON.parse(wrong!.stderr), {
            error: `--confirm must be the chamber's name exactly, "Leaving Chamber": nothing was deleted.`
          })
          const dry = json(dryJson!)
          assert.deepStrictEqual(dry.counts, { ...leavingBefore, tenants: 1 })
          assert.strictEqual(dry.dry_run, true)
          assert.strictEqual(dry.rows, sum(leavingBefore) + 1)
          assert.match(dryText!.stdout, new RegExp(`^Would delete "Leaving Chamber" ${leaving.id}: ${(sum(leavingBefore) + 1).toLocaleString("en-US")} rows \\(.*\\d+ members.*\\)\\.\\nNothing was changed \\(--dry-run\\)\\.\\n$`))
          assert.deepStrictEqual(yield* rowsOf(leaving.internal, leaving.id), leavingBefore)
          assert.strictEqual((yield* get(server.port, "/api/v1/me", leaving.key)).status, 200)

          // The removal, one row a batch, killed once it has begun removing.
          const base = yield* Env
          const child = spawn(process.execPath, [BIN, "tenant", "delete", leaving.id, "--confirm", "Leaving Chamber", "--batch-size", "1"], {
            env: { ...process.env, REDIS_URL: "", ...base, NO_COLOR: "1" }
          })
          let output = ""
          child.stdout.on("data", (d) => (output += d))
          child.stderr.on("data", (d) => (output += d))
          const exited = new Promise<void>((resolve) => child.on("close", () => resolve()))
          yield* until("the keys revoked", Effect.sync(() => /1 key revoked, 1 webhook subscription deactivated; removing/.test(output)))
          // At once: the key answers 401; the other chamber is served.
          const refused = yield* get(server.port, "/api/v1/me", leaving.key)
          assert.strictEqual(refused.status, 401)
          yield* until("rows removed", Effect.map(rowsOf(leaving.internal, leaving.id), (c) => sum(c) < sum(leavingBefore)))
          child.kill("SIGKILL")
          yield* Effect.promise(() => exited)
          const half = yield* rowsOf(leaving.internal, leaving.id)
          assert.isAbove(sum(half), 0, `killed before it finished: ${output}`)
          assert.strictEqual((yield* get(server.port, "/api/v1/me", leaving.key)).status, 401)
          assert.strictEqual((yield* get(server.port, "/api/v1/me", staying.key)).status, 200)
          assert.strictEqual((yield* get(server.port, "/api/v1/members", staying.key)).status, 200)

          // Half-deleted: listed as such, refused by other commands.
          const [listing, listingText, mint] = yield* chambers([
            ["tenant", "list", "--json"],
            ["tenant", "list"],
            ["key", "mint", "--tenant", leaving.id, "--as", "admin@leaving.example", "--name", "late", "--scopes", "all"]
          ])
          const listed = json(listing!)
          assert.isString(listed.find((t: { id: string }) => t.id === leaving.id).deleting_at)
          assert.isNull(listed.find((t: { id: string }) => t.id === staying.id).deleting_at)
          assert.match(listingText!.stdout, new RegExp(`${leaving.id}  Leaving Chamber .*BEING DELETED`))
          assert.strictEqual(mint!.code, 1)
          assert.include(mint!.stderr, `Chamber ${leaving.id} is being deleted: run chamber tenant delete again to finish.`)

          // The second run finishes it.
          const done = json(yield* chamber(["tenant", "delete", leaving.id, "--confirm", "Leaving Chamber", "--json"]))
          assert.deepInclude(done, { id: leaving.id, deleted: true, resumed: true, keys_revoked: 0, subscriptions_deactivated: 0 })
          assert.strictEqual(done.counts.tenants, 1)
          assert.deepStrictEqual(yield* rowsOf(leaving.internal, leaving.id), Object.fromEntries(Object.keys(leavingBefore).map((t) => [t, 0])))
          assert.isUndefined(yield* internalId(leaving.id))
          assert.deepStrictEqual(yield* mentionsOf(leaving.id), {})
          assert.deepStrictEqual(yield* rowsOf(staying.internal, staying.id), stayingBefore)
          assert.strictEqual((yield* get(server.port, "/api/v1/me", leaving.key)).status, 401)
          assert.strictEqual((yield* get(server.port, "/api/v1/members", staying.key)).status, 200)

          const again = yield* chamber(["tenant", "delete", leaving.id, "--confirm", "Leaving Chamber"])
          assert.strictEqual(again.code, 1)
          assert.strictEqual(again.stderr, `error: No chamber ${leaving.id}.\n`)
        }), 420_000)
    })
  })
}
