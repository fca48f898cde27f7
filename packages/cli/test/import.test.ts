/**
 * `chamber import --tenant ID FILE [--dry-run]` as an operator runs it (docs/cli.md "Import"): the
 * ids and counts it prints, every bad record reported by collection, index, ref and field with
 * exit code 1 and nothing written, files that are not JSON, and its progress. The importer's
 * rules are tested in http-adapter/test/import.test.ts.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { runtimes } from "@chamber/pg-adapter/testing"
import { importProgress } from "../src/ImportProgress.ts"
import { chamber, envLayer, get, json, serving } from "./harness.ts"
import { suiteDir } from "./tempDirs.ts"
import { tenThousand } from "@chamber/core/test/import-fixtures"

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

const THREE_PROBLEMS = [
  { collection: "members", index: 2, ref: "m2", field: "status", message: "The selected status is invalid (expected one of: active, pending, lapsed, former)." },
  { collection: "members", index: 9_990, ref: "m9990", field: "email", message: "The email field must be a valid email address." },
  { collection: "contacts", index: 3, ref: null, field: "member_ref", message: 'The member ref "m10001" names no earlier record of members.' }
]

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
          const status = "The selected status is invalid (expected one of: active, pending, lapsed, former)."
          assert.deepStrictEqual(JSON.parse(refused.stderr), {
            error: "1 record is invalid; nothing was written.",
            problems: [{ collection: "members", index: 2, ref: "m3", field: "status", message: status }],
            problem_count: 1,
            record_count: 1
          })
          const human = yield* chamber(["import", "--tenant", tenant.id, file("bad.json", bad)])
          assert.strictEqual(human.code, 1)
          assert.strictEqual(human.stderr, `error: 1 record is invalid; nothing was written.\n  members[2].status (ref "m3"): ${status}\n`)

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
          // The embedded database takes an import in slices, published at once; PostgreSQL in one transaction.
          const how = rt.name === "pglite" ? "published at once" : "one transaction"
          assert.match(again.stdout, new RegExp(`^Imported 1 members, 1 contacts, 1 events, 1 registrations in [0-9.]+ s, ${how}\n$`))
        }), 120_000)

      it.effect("a file that cannot be read or is not JSON, an unknown chamber, an unknown collection: exit 1 with a plain message", () =>
        Effect.gen(function*() {
          const tenant = json(yield* chamber(["tenant", "create", "--name", "Import Chamber 2", "--json"]))
          const cases: ReadonlyArray<readonly [ReadonlyArray<string>, RegExp]> = [
            [["--tenant", tenant.id, join(dir, "missing.json")], /^Cannot read .*missing\.json: ENOENT/],
            [["--tenant", tenant.id, file("broken.json", "{\"members\": [")], /broken\.json is not valid JSON: the text ends where a JSON value was expected at line 1, column 14\.$/],
            [
              ["--tenant", tenant.id, file("comma.json", '{"members": [\n  {"name": "Acme", "status": "active"}\n  {"name": "Beacon"}\n]}')],
              /comma\.json is not valid JSON: expected ',' or '\]' after an array item at line 3, column 3\.$/
            ],
            [["--tenant", "chm_nobody", file("empty.json", {})], /No chamber chm_nobody/],
            [["--tenant", tenant.id, file("typo.json", { memebers: [] })], /Unknown collection "memebers"/]
          ]
          for (const [args, pattern] of cases) {
            const r = yield* chamber(["import", ...args, "--json"])
            assert.strictEqual(r.code, 1, r.stdout)
            assert.match(JSON.parse(r.stderr).error, pattern)
          }
        }), 120_000)

      it.effect("10,000 records with three bad ones, with the server running: all three reported before anything is written, with and without --dry-run; put right, --dry-run passes and writes nothing", () =>
        Effect.gen(function*() {
          const { port } = yield* serving()
          const tenant = json(yield* chamber(["tenant", "create", "--name", "Ten Thousand Chamber", "--json"]))
          json(yield* chamber(["user", "add", "--tenant", tenant.id, "--email", "ops@ten.example", "--role", "chamber_admin", "--json"]))
          const key = json(yield* chamber(["key", "mint", "--tenant", tenant.id, "--as", "ops@ten.example", "--name", "Check", "--scopes", "read", "--json"])).key
          const bad = file("ten-thousand.json", tenThousand())

          for (const dryRun of [[], ["--dry-run"]]) {
            const refused = yield* chamber(["import", "--tenant", tenant.id, bad, ...dryRun, "--json"])
            assert.strictEqual(refused.code, 1, refused.stderr)
            assert.strictEqual(refused.stdout, "")
            assert.deepStrictEqual(JSON.parse(refused.stderr), {
              error: "3 records are invalid; nothing was written.",
              problems: THREE_PROBLEMS,
              problem_count: 3,
              record_count: 3
            })
            const human = yield* chamber(["import", "--tenant", tenant.id, bad, ...dryRun])
            assert.strictEqual(human.code, 1)
            assert.strictEqual(human.stdout, "")
            assert.strictEqual(
              human.stderr,
              [
                "error: 3 records are invalid; nothing was written.",
                `  members[2].status (ref "m2"): ${THREE_PROBLEMS[0]!.message}`,
                `  members[9990].email (ref "m9990"): ${THREE_PROBLEMS[1]!.message}`,
                `  contacts[3].member_ref: ${THREE_PROBLEMS[2]!.message}`,
                ""
              ].join("\n")
            )
          }
          const members = () => get(port, "/api/v1/members", key).pipe(Effect.map((r) => r.body.meta.total))
          assert.strictEqual(yield* members(), 0)

          const fixed = tenThousand()
          fixed.members[2]!.status = "active"
          fixed.members[9_990]!.email = "m9990@example.com"
          fixed.contacts[3]!.member_ref = "m3"
          const good = file("ten-thousand-fixed.json", fixed)
          const checked = json(yield* chamber(["import", "--tenant", tenant.id, good, "--dry-run", "--json"]))
          assert.deepStrictEqual(checked, {
            dry_run: true,
            counts: { members: 9_995, contacts: 5, events: 0, registrations: 0, deals: 0, invoices: 0, payments: 0, sponsorships: 0, placements: 0, bookings: 0 }
          })
          const said = yield* chamber(["import", "--tenant", tenant.id, good, "--dry-run"])
          assert.strictEqual(said.code, 0, said.stderr)
          assert.match(said.stdout, /^Checked 9,995 members, 5 contacts in [0-9.]+ s: no problems found\. Nothing was written \(--dry-run\)\.\n$/)
          assert.strictEqual(yield* members(), 0)
        }), 180_000)

      it.effect("the 422 messages of money as the import shows them: a JSON number, and a string with a $, each one message saying what to send", () =>
        Effect.gen(function*() {
          const tenant = json(yield* chamber(["tenant", "create", "--name", "Money Chamber", "--json"]))
          const doc = {
            members: [{ ref: "m1", name: "Acme", status: "active" }],
            invoices: [
              { ref: "i1", member_ref: "m1", lines: [{ description: "Dues", unit: 450 }] },
              { ref: "i2", member_ref: "m1", lines: [{ description: "Dues", unit: "$225.00" }] }
            ]
          }
          const r = yield* chamber(["import", "--tenant", tenant.id, file("money.json", doc)])
          assert.strictEqual(r.code, 1)
          assert.strictEqual(
            r.stderr,
            [
              "error: 2 records are invalid; nothing was written.",
              '  invoices[0].lines.0.unit (ref "i1"): The unit field must be a string in dollars such as "12.50".',
              '  invoices[1].lines.0.unit (ref "i2"): The unit field must be an amount in dollars such as "12.50" (digits, at most two decimal places; no $, sign or thousands separator).',
              ""
            ].join("\n")
          )
        }), 120_000)
    })
  })
}

describe("the import's progress on stderr", () => {
  const recorder = () => {
    let written = ""
    return { stream: { write: (s: string) => (written += s) }, written: () => written }
  }
  const event = (phase: "checking" | "writing", done: number, collection: "members" | "contacts" = "members") => ({ phase, done, total: 10_000, collection })

  it("on a terminal: one line redrawn at most every 100 ms, with the rate and the time left once a second has passed, ended at each pass's end", () => {
    const out = recorder()
    let now = 1_000_000
    const progress = importProgress(out.stream, true, () => now)
    progress.tell(event("checking", 0))
    now += 400
    progress.tell(event("checking", 10_000))
    progress.tell(event("writing", 0))
    now += 500
    progress.tell(event("writing", 290))
    now += 99
    progress.tell(event("writing", 300))
    now += 1
    progress.tell(event("writing", 500))
    now += 1_400
    progress.tell(event("writing", 1_000))
    now += 15_000
    progress.tell(event("writing", 10_000, "contacts"))
    const frames = out.written().split("\r").filter((f) => f !== "")
    assert.deepStrictEqual(frames, [
      `Checking [${"-".repeat(30)}] 0/10,000  members\x1b[K`,
      `Checking [${"#".repeat(30)}] 10,000/10,000  members\x1b[K\n`,
      `Writing  [${"-".repeat(30)}] 0/10,000  members\x1b[K`,
      `Writing  [${"#".repeat(1)}${"-".repeat(29)}] 290/10,000  members\x1b[K`,
      `Writing  [${"#".repeat(2)}${"-".repeat(28)}] 500/10,000  members\x1b[K`,
      // 1,000 records in 2 s: 500 a second, 9,000 to go.
      `Writing  [${"#".repeat(3)}${"-".repeat(27)}] 1,000/10,000  members  500/s, about 18 s left\x1b[K`,
      `Writing  [${"#".repeat(30)}] 10,000/10,000  contacts  588/s, done in 17 s\x1b[K\n`
    ])
  })

  it("elsewhere (a log, a pipe): a line every 5 s with the rate and the time left; a line left open is ended when the import stops", () => {
    const out = recorder()
    let now = 0
    const progress = importProgress(out.stream, false, () => now)
    progress.tell(event("checking", 0))
    progress.tell(event("checking", 10_000))
    progress.tell(event("writing", 0))
    for (let done = 1; done <= 10_000; done++) {
      now += 10
      progress.tell(event("writing", done))
    }
    assert.deepStrictEqual(out.written().split("\n"), [
      "Writing: 500 of 10,000 records (members), 100 a second, about 1 min 35 s left",
      "Writing: 1,000 of 10,000 records (members), 100 a second, about 1 min 30 s left",
      ...Array.from({ length: 17 }, (_, i) => {
        const done = 1_500 + i * 500
        return `Writing: ${done.toLocaleString("en-US")} of 10,000 records (members), 100 a second, about ${
          (10_000 - done) / 100 >= 60 ? `1 min ${String((10_000 - done) / 100 - 60).padStart(2, "0")} s` : `${(10_000 - done) / 100} s`
        } left`
      }),
      ""
    ])

    const terminal = recorder()
    const stopped = importProgress(terminal.stream, true, () => 0)
    stopped.tell(event("checking", 0))
    stopped.end()
    stopped.end()
    assert.isTrue(terminal.written().endsWith("\x1b[K\n"))
    assert.strictEqual(terminal.written().split("\n").length, 2)
  })
})
