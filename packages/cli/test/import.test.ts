/**
 * `chamber import --tenant ID FILE` as an operator runs it (docs/cli.md "Import"): the ids and
 * counts it prints, a bad record reported by collection, index and field with exit code 1 and
 * nothing written, and files that are not JSON. The importer's rules are tested in
 * http-adapter/test/import.test.ts.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { runtimes } from "@chamber/pg-adapter/testing"
import { progressBar } from "../src/commands/importFile.ts"
import { chamber, envLayer, json } from "./harness.ts"
import { suiteDir } from "./tempDirs.ts"

const dir = suiteDir("import")
const file = (name: string, content: unknown) => {
  const path = join(dir, name)
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content))
  return path
}

const good = {
  members: [{ ref: "m1", name: "Acme", status: "active", custom_fields: { k: "v" } }],
  contacts: [{ ref: "c1", first_name: "Ann", last_name: "Lee", member_ref: "m1" }],
  events: [{ ref: "e1", title: "Gala", starts_at: "2027-01-10T18:00:00Z", status: "published" }],
  registrations: [{ event_ref: "e1", member_ref: "m1", contact_ref: "c1", status: "registered" }],
  deals: [],
  invoices: [],
  payments: []
}

for (const rt of runtimes()) {
  describe(`chamber import on ${rt.name}`, () => {
    layer(envLayer(rt), { timeout: 120_000 })((it) => {
      it.effect("prints the ids of refs and the counts; a bad record exits 1 naming collection, index and field, and writes nothing", () =>
        Effect.gen(function*() {
          const tenant = json(yield* chamber(["tenant", "create", "--name", "Import Chamber", "--json"]))
          const bad = structuredClone(good) as any
          bad.members.push({ ref: "m2", name: "Beacon", status: "active" }, { ref: "m3", name: "Cedar", status: "retired" })
          const refused = yield* chamber(["import", "--tenant", tenant.id, file("bad.json", bad), "--json"])
          assert.strictEqual(refused.code, 1)
          assert.strictEqual(refused.stdout, "")
          assert.match(JSON.parse(refused.stderr).error, /^members\[2\]\.status: The selected status is invalid/)
          const human = yield* chamber(["import", "--tenant", tenant.id, file("bad.json", bad)])
          assert.strictEqual(human.code, 1)
          assert.match(human.stderr, /error: members\[2\]\.status: /)

          // The refused file wrote nothing (http-adapter/test/import.test.ts checks that through the API); a good one goes in.
          const done = json(yield* chamber(["import", "--tenant", tenant.id, file("good.json", good), "--json"]))
          assert.deepStrictEqual(done.counts, {
            members: 1,
            contacts: 1,
            events: 1,
            registrations: 1,
            deals: 0,
            invoices: 0,
            payments: 0,
            sponsorships: 0,
            placements: 0,
            bookings: 0
          })
          assert.deepStrictEqual(Object.keys(done.ids).sort(), ["c1", "e1", "m1"])
          const again = yield* chamber(["import", "--tenant", tenant.id, file("good.json", good)])
          assert.strictEqual(again.code, 0, again.stderr)
          assert.match(again.stdout, /^Imported 1 members, 1 contacts, 1 events, 1 registrations in [0-9.]+ s, one transaction\n$/)
        }), 120_000)

      it.effect("a file that cannot be read or is not JSON, an unknown chamber, an unknown collection: exit 1 with a plain message", () =>
        Effect.gen(function*() {
          const tenant = json(yield* chamber(["tenant", "create", "--name", "Import Chamber 2", "--json"]))
          const cases: ReadonlyArray<readonly [ReadonlyArray<string>, RegExp]> = [
            [["--tenant", tenant.id, join(dir, "missing.json")], /^Cannot read .*missing\.json: ENOENT/],
            [["--tenant", tenant.id, file("broken.json", "{\"members\": [")], /broken\.json is not valid JSON/],
            [["--tenant", "chm_nobody", file("empty.json", {})], /No chamber chm_nobody/],
            [["--tenant", tenant.id, file("typo.json", { memebers: [] })], /Unknown collection "memebers"/]
          ]
          for (const [args, pattern] of cases) {
            const r = yield* chamber(["import", ...args, "--json"])
            assert.strictEqual(r.code, 1, r.stdout)
            assert.match(JSON.parse(r.stderr).error, pattern)
          }
        }), 120_000)
    })
  })
}

describe("the import progress bar", () => {
  it("redraws one line on the terminal, at most every 100 ms, and always draws the end with a newline", () => {
    let written = ""
    let now = 1_000_000
    const stream = { write: (s: string) => (written += s) } as unknown as NodeJS.WriteStream
    const bar = progressBar(stream, () => now)
    bar(1, 10_000, "members")
    now += 99
    bar(2, 10_000, "members")
    now += 1
    bar(5_000, 10_000, "members")
    bar(10_000, 10_000, "members")
    const frames = written.split("\r").filter((f) => f !== "")
    assert.deepStrictEqual(frames, [
      `[${"-".repeat(30)}] 1/10,000  members\x1b[K`,
      `[${"#".repeat(15)}${"-".repeat(15)}] 5,000/10,000  members\x1b[K`,
      `[${"#".repeat(30)}] 10,000/10,000  members\x1b[K\n`
    ])
  })
})
