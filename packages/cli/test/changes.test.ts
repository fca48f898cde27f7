/**
 * `chamber changes` (docs/cli.md "Change feed") as an operator runs it, a real process per command,
 * on each storage runtime: one page as one JSON document or a table, `--after`, `--types`, and
 * `--follow` printing events as they are committed until it is interrupted.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { runtimes } from "@chamber/pg-adapter/testing"
import { BIN, chamber, chambers, Env, envLayer, json } from "./harness.ts"
import { suiteDir } from "./tempDirs.ts"

const dir = suiteDir("changes")

const importFile = (name: string, document: unknown) => {
  const file = join(dir, name)
  writeFileSync(file, JSON.stringify(document))
  return file
}

for (const rt of runtimes()) {
  describe(`chamber changes on ${rt.name}`, () => {
    layer(envLayer(rt), { timeout: 180_000 })((it) => {
      it.effect("one page as one JSON document or a table; --after its cursor; --types; --follow prints later events until interrupted", () =>
        Effect.gen(function*() {
          const tenant = json(yield* chamber(["tenant", "create", "--name", "Feed Chamber", "--json"]))
          const first = importFile(`first-${rt.name}.json`, {
            members: [{ ref: "a", name: "Acme", status: "active" }, { name: "Birch", status: "active" }],
            contacts: [{ first_name: "Ann", last_name: "Lee" }]
          })
          json(yield* chamber(["import", "--tenant", tenant.id, first, "--json"]))

          const page = json(yield* chamber(["changes", "--tenant", tenant.id, "--json"]))
          assert.deepStrictEqual(Object.keys(page), ["data", "meta"])
          assert.deepStrictEqual(page.data.map((e: any) => [e.type, e.data.attributes.name ?? e.data.attributes.first_name]), [
            ["member.created", "Acme"],
            ["member.created", "Birch"],
            ["contact.created", "Ann"]
          ])
          assert.deepStrictEqual(Object.keys(page.data[0]), ["id", "type", "created_at", "data"])
          assert.strictEqual(page.meta.has_more, false)

          // A well-formed cursor one past the newest position this chamber's feed gave out.
          const headPosition = BigInt(Buffer.from(page.meta.next_cursor, "base64url").toString("utf8").slice("v2.".length))
          const ahead = Buffer.from(`v2.${headPosition + 1n}`).toString("base64url")
          const [table, noneJson, contactsJson, bad, ...past] = yield* chambers([
            ["changes", "--tenant", tenant.id],
            ["changes", "--tenant", tenant.id, "--after", page.meta.next_cursor, "--json"],
            ["changes", "--tenant", tenant.id, "--types", "contact.created", "--json"],
            ["changes", "--tenant", tenant.id, "--after", "nope", "--json"],
            ...[["--json"], []].map((format) => ["changes", "--tenant", tenant.id, "--after", ahead, ...format])
          ])
          assert.strictEqual(table!.code, 0, table!.stderr)
          assert.match(table!.stdout, /^created_at\s+type\s+resource\s+id\n/)
          assert.match(table!.stdout, /\n\d{4}-\S+\s+contact\.created\s+\d+\s+evt_\S+\n/)
          assert.include(table!.stdout, `next cursor: ${page.meta.next_cursor}`)

          const none = json(noneJson!)
          assert.deepStrictEqual(none, { data: [], meta: { next_cursor: page.meta.next_cursor, has_more: false } })
          const contacts = json(contactsJson!)
          assert.deepStrictEqual(contacts.data.map((e: any) => e.type), ["contact.created"])
          assert.strictEqual(bad!.code, 1)
          assert.match(JSON.parse(bad!.stderr).error, /after/)
          for (const refused of past) {
            assert.deepStrictEqual([refused.code, refused.stdout], [1, ""], refused.stderr)
            assert.match(refused.stderr, /after field is past the newest event/)
          }

          // --follow from now: only what is committed after it started, one JSON line per event.
          const env = yield* Env
          const follower = spawn(process.execPath, [BIN, "changes", "--tenant", tenant.id, "--after", "head", "--follow", "--json"], {
            env: { ...process.env, REDIS_URL: "", ...env, NO_COLOR: "1" }
          })
          let [out, err] = ["", ""]
          follower.stdout.on("data", (d) => (out += d))
          follower.stderr.on("data", (d) => (err += d))
          const exited = new Promise<void>((resolve) => follower.on("close", () => resolve()))
          // It says when it follows: from then on every commit is printed.
          yield* Effect.promise(async () => {
            for (let waited = 0; waited < 30_000 && !err.includes("Following") && follower.exitCode === null; waited += 20) {
              await new Promise((r) => setTimeout(r, 20))
            }
          })
          assert.match(err, /Following the change feed \(Ctrl-C to stop\)/, out)
          json(yield* chamber(["import", "--tenant", tenant.id, importFile(`later-${rt.name}.json`, { members: [{ name: "Cedar", status: "active" }] }), "--json"]))
          yield* Effect.promise(async () => {
            for (let waited = 0; waited < 30_000 && !out.includes("Cedar"); waited += 50) await new Promise((r) => setTimeout(r, 50))
          })
          follower.kill("SIGINT")
          yield* Effect.promise(() => exited)
          const lines = out.trim().split("\n").map((l) => JSON.parse(l))
          assert.deepStrictEqual(lines.map((e) => [e.type, e.data.attributes.name]), [["member.created", "Cedar"]])
        }), 170_000)

      it.effect("chamber import fires every change's event (ruling 34): one per step, in order, each with the resource as it stood after that step", () =>
        Effect.gen(function*() {
          const tenant = json(yield* chamber(["tenant", "create", "--name", "Every Change Chamber", "--json"]))
          const done = json(yield* chamber(["import", "--tenant", tenant.id, importFile(`every-${rt.name}.json`, {
            members: [{ ref: "m", name: "Acme", status: "active" }],
            contacts: [{ first_name: "Ann", last_name: "Lee", member_ref: "m" }],
            events: [{ ref: "x", title: "Called off", starts_at: "2027-02-10T18:00:00Z", status: "cancelled" }],
            deals: [{ member_ref: "m", title: "Free consult", status: "approved" }],
            invoices: [{ ref: "i", member_ref: "m", lines: [{ description: "Dues", unit: "300.00" }], status: "open" }],
            payments: [{ invoice_ref: "i", method: "check", amount: "300.00" }],
            sponsorships: [{ member_ref: "m", name: "Gold", status: "active" }],
            placements: [{ member_ref: "m", ad_headline: "Hi", status: "active" }],
            bookings: [{ booking_type_name: "Room A", starts_at: "2027-01-01T09:00:00Z", member_ref: "m" }]
          }), "--json"]))
          const page = json(yield* chamber(["changes", "--tenant", tenant.id, "--json"]))
          assert.deepStrictEqual(page.data.map((e: any) => [e.type, e.data.attributes.status ?? null]), [
            ["member.created", "active"],
            ["contact.created", null],
            ["event.created", "published"],
            ["event.updated", "cancelled"],
            ["deal.created", "approved"],
            ["deal.approved", "approved"],
            ["invoice.created", "draft"],
            ["invoice.updated", "open"],
            ["invoice.issued", "open"],
            ["payment.created", null],
            ["invoice.updated", "paid"],
            ["invoice.paid", "paid"],
            ["sponsorship.created", "active"],
            ["placement.created", "active"],
            ["booking.created", "confirmed"]
          ])
          assert.deepInclude(page.data.find((e: any) => e.type === "payment.created").data.attributes, { member_id: done.ids.m, amount_cents: 30000 })
          const some = json(yield* chamber(["changes", "--tenant", tenant.id, "--types", "payment.created,invoice.updated", "--json"]))
          assert.deepStrictEqual(some.data.map((e: any) => e.type), ["invoice.updated", "payment.created", "invoice.updated"])
        }), 120_000)
    })
  })
}
