/**
 * `chamber import` of CSV files and with `--skip-invalid` (docs/cli.md "CSV files", "Skipping
 * invalid records"), and `tenant create --admin`: how cells are read (quoting, BOM, CRLF, empty
 * and quoted empty cells, numbers, booleans, JSON, custom fields), where problems are told (file,
 * line, column), refs across files, and partial imports with their problems file.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { runtimes } from "@chamber/pg-adapter/testing"
import { readCsvDocument } from "../src/CsvDocument.ts"
import { chamber, envLayer, json } from "./harness.ts"
import { suiteDir } from "./tempDirs.ts"

const dir = suiteDir("import-csv")
const file = (name: string, content: string | Buffer) => {
  const path = join(dir, name)
  writeFileSync(path, content)
  return path
}
const BOM = "\uFEFF"

const NONE = { members: 0, contacts: 0, events: 0, registrations: 0, deals: 0, invoices: 0, payments: 0, sponsorships: 0, placements: 0, bookings: 0 }

describe("CSV files as an import document", () => {
  it("RFC 4180 quoting, a BOM, CRLF and LF, blank lines and a record over two lines; an empty cell is no field, \"\" an empty string; cells typed by their field", async () => {
    const members = file(
      "typed-members.csv",
      BOM +
        "ref,name,status,slogan,employee_count,directory_visible,secondary_industries,custom_fields.tier,custom_fields.since\r\n" +
        'm1,"Acme, ""the"" Co.",active,"",42,TRUE,"[""Retail"",""Wholesale""]",Gold,1998\r\n' +
        "\r\n" +
        'm2,"Beacon\r\nLabs",pending,,,false,,,\r\n' +
        "m3,Cedar,active,x,many,yes,Retail,,\r\n"
    )
    const invoices = file(
      "typed-invoices.csv",
      'ref,member_ref,status,lines\ni1,m1,open,"[{""description"":""Dues"",""unit"":""450.00""}]"\n'
    )
    const csv = await readCsvDocument([{ collection: "members", path: members }, { collection: "invoices", path: invoices }])
    assert.deepStrictEqual(csv.document, {
      members: [
        {
          ref: "m1",
          name: 'Acme, "the" Co.',
          status: "active",
          slogan: "",
          employee_count: 42,
          directory_visible: true,
          secondary_industries: ["Retail", "Wholesale"],
          // A custom field's cell is its text.
          custom_fields: { tier: "Gold", since: "1998" }
        },
        { ref: "m2", name: "Beacon\r\nLabs", status: "pending", directory_visible: false },
        // A cell that is not of its field's type stays text, for the importer to refuse with the API's message.
        { ref: "m3", name: "Cedar", status: "active", slogan: "x", employee_count: "many", directory_visible: "yes", secondary_industries: "Retail" }
      ],
      invoices: [{ ref: "i1", member_ref: "m1", status: "open", lines: [{ description: "Dues", unit: "450.00" }] }]
    })
    // The header is line 1; a blank line is counted; a record is told by the line it begins on.
    assert.deepStrictEqual([0, 1, 2].map((i) => csv.place("members", i, null).line), [2, 4, 6])
    assert.deepStrictEqual(csv.place("members", 2, "employee_count"), { file: members, line: 6, column: "employee_count" })
    assert.deepStrictEqual(csv.place("invoices", 0, "lines.0.unit"), { file: invoices, line: 2, column: "lines" })
    assert.match(csv.note("members", 2, "secondary_industries")!, /^the cell is not JSON \(.* at line 1, column 1\)$/)
    assert.isUndefined(csv.note("members", 2, "employee_count"))
  })

  it("a header the collection does not take, a file that is not CSV, an empty file: refused naming the file and the line", async () => {
    const refusal = (collection: "members" | "contacts", name: string, content: string) =>
      readCsvDocument([{ collection, path: file(name, content) }]).then(() => "read", (e: Error) => e.message)
    assert.match(
      await refusal("members", "header.csv", "ref,name,emial,status,name,custom_fields.tier\n"),
      /header\.csv line 1 \(the header\): no field of members is called "emial"; the column "name" comes twice\. The columns of members are ref, name, slug, .*, and custom_fields\.<key> for a custom field\.$/
    )
    assert.match(await refusal("contacts", "nokey.csv", "first_name,last_name,\n"), /nokey\.csv line 1 \(the header\): column 3 has no name\./)
    assert.match(await refusal("members", "ragged.csv", "name,status\nAcme,active\nBeacon,active,extra\n"), /ragged\.csv is not valid CSV: .*line 3/)
    assert.match(await refusal("members", "quote.csv", 'name,status\n"Acme,active\n'), /quote\.csv is not valid CSV: Quote Not Closed/)
    assert.match(await refusal("members", "empty.csv", ""), /empty\.csv is empty: a CSV file begins with a header row of field names\./)
    const missing = await readCsvDocument([{ collection: "members", path: join(dir, "missing.csv") }]).then(() => "read", (e: Error) => e.message)
    assert.match(missing, /^Cannot read .*missing\.csv: ENOENT/)
  })
})

for (const rt of runtimes()) {
  describe(`chamber import of CSV files on ${rt.name}`, () => {
    const rtFile = (name: string, content: string) => file(`${rt.name}-${name}`, content)
    layer(envLayer(rt), { timeout: 180_000 })((it) => {
      it.effect("refs across two files are imported; a bad cell is reported with its file, line and column, and nothing is written", () =>
        Effect.gen(function*() {
          const tenant = json(yield* chamber(["tenant", "create", "--name", "CSV Chamber", "--json"]))
          const members = rtFile("members.csv", BOM + "ref,name,status,custom_fields.tier\r\nm1,Acme,active,Gold\r\nm2,\"Beacon, Inc.\",lapsed,\r\n")
          const contacts = rtFile("contacts.csv", "ref,first_name,last_name,member_ref\nc1,Ann,Lee,m1\nc2,Bo,Ray,m2\n")
          const bad = rtFile("bad-members.csv", "ref,name,status,employee_count\nm1,Acme,active,12\nm2,Beacon,active,twelve\n")

          const refused = yield* chamber(["import", "--tenant", tenant.id, "--members", bad, "--contacts", contacts, "--json"])
          assert.strictEqual(refused.code, 1)
          assert.deepStrictEqual(JSON.parse(refused.stderr), {
            error: "1 record is invalid; nothing was written.",
            problems: [{
              collection: "members",
              index: 1,
              ref: "m2",
              field: "employee_count",
              message: "The employee count field must be an integer.",
              file: bad,
              line: 3,
              column: "employee_count"
            }],
            problem_count: 1,
            record_count: 1
          })
          const human = yield* chamber(["import", "--tenant", tenant.id, "--members", bad, "--contacts", contacts])
          assert.strictEqual(human.code, 1)
          assert.strictEqual(
            human.stderr,
            `error: 1 record is invalid; nothing was written.\n  ${bad} line 3, column employee_count (ref "m2"): The employee count field must be an integer.\n`
          )

          const done = json(yield* chamber(["import", "--tenant", tenant.id, "--members", members, "--contacts", contacts, "--json"]))
          assert.deepStrictEqual(done.counts, { ...NONE, members: 2, contacts: 2 })
          assert.deepStrictEqual(Object.keys(done.ids).sort(), ["c1", "c2", "m1", "m2"])

          const both = yield* chamber(["import", "--tenant", tenant.id, rtFile("doc.json", "{}"), "--members", members, "--json"])
          assert.strictEqual(both.code, 1)
          assert.match(JSON.parse(both.stderr).error, /^Give a JSON document or CSV files \(--members …\), not both\.$/)
          const header = yield* chamber(["import", "--tenant", tenant.id, "--contacts", rtFile("typo.csv", "first_name,lastname\n")])
          assert.strictEqual(header.code, 1)
          assert.match(header.stderr, /typo\.csv line 1 \(the header\): no field of contacts is called "lastname"/)
        }), 180_000)

      it.effect("--skip-invalid: writes the valid records, refuses the invalid ones and those whose refs name them, lists them with their problems beside the input, and says both counts", () =>
        Effect.gen(function*() {
          const tenant = json(yield* chamber(["tenant", "create", "--name", "Partial Chamber", "--json"]))
          const members = rtFile(
            "partial-members.csv",
            "ref,name,status,slug\nm1,Acme,active,acme\nm2,Beacon,retired,\nm3,Cedar,active,\nm4,Dune,active,\n"
          )
          const contacts = rtFile("partial-contacts.csv", "ref,first_name,last_name,member_ref\nc1,Ann,Lee,m1\nc2,Bo,Ray,m2\nc3,Cy,Dee,m3\n")

          // Without --skip-invalid nothing changes: all or nothing.
          const whole = yield* chamber(["import", "--tenant", tenant.id, "--members", members, "--contacts", contacts, "--json"])
          assert.strictEqual(whole.code, 1)
          assert.strictEqual(JSON.parse(whole.stderr).error, "1 record is invalid; nothing was written.")
          assert.isFalse(existsSync(`${members}.rejected.json`))

          const r = yield* chamber(["import", "--tenant", tenant.id, "--members", members, "--contacts", contacts, "--skip-invalid"])
          assert.strictEqual(r.code, 0, r.stderr)
          const rejected = `${members}.rejected.json`
          assert.match(
            r.stdout,
            new RegExp(`^Imported 3 members, 2 contacts in [0-9.]+ s, ${rt.name === "pglite" ? "published at once" : "one transaction"}\\nRefused 2 records \\(5 written\\): ${rejected.replace(/[.]/g, "\\.")} lists them with their problems\\.\\n$`)
          )
          assert.deepStrictEqual(JSON.parse(readFileSync(rejected, "utf8")), {
            refused: 2,
            written: 5,
            records: [
              {
                collection: "members",
                index: 1,
                ref: "m2",
                file: members,
                line: 3,
                problems: [{ field: "status", column: "status", message: "The selected status is invalid (expected one of: active, pending, lapsed, former)." }],
                record: { ref: "m2", name: "Beacon", status: "retired" }
              },
              {
                collection: "contacts",
                index: 1,
                ref: "c2",
                file: contacts,
                line: 3,
                problems: [{ field: "member_ref", column: "member_ref", message: 'The member ref "m2" names members[1], which was refused.' }],
                record: { ref: "c2", first_name: "Bo", last_name: "Ray", member_ref: "m2" }
              }
            ]
          })

          // A rule only the database tells (the slug acme is now taken) refuses that record alone, and the contact that names it; the rest is committed.
          const again = rtFile("again.json", JSON.stringify({
            members: [{ ref: "n1", name: "Acme Two", status: "active", slug: "acme" }, { ref: "n2", name: "Eagle", status: "active" }],
            contacts: [{ ref: "d1", first_name: "Di", last_name: "Ng", member_ref: "n1" }, { ref: "d2", first_name: "Ed", last_name: "Oh", member_ref: "n2" }]
          }))
          const problems = join(dir, `${rt.name}-again-problems.json`)
          const second = json(yield* chamber(["import", "--tenant", tenant.id, again, "--skip-invalid", "--rejected", problems, "--json"]))
          assert.deepStrictEqual(second.counts, { ...NONE, members: 1, contacts: 1 })
          assert.deepStrictEqual(Object.keys(second.ids).sort(), ["d2", "n2"])
          assert.strictEqual(second.refused, 2)
          assert.strictEqual(second.rejected_file, problems)
          const listed = JSON.parse(readFileSync(problems, "utf8"))
          assert.deepStrictEqual(listed.records.map((x: any) => [x.collection, x.index, x.ref, x.problems.map((p: any) => p.field)]), [
            ["members", 0, "n1", ["slug"]],
            ["contacts", 0, "d1", ["member_ref"]]
          ])
          assert.strictEqual(listed.records[1].problems[0].message, 'The member ref "n1" names members[0], which could not be written.')
          assert.isFalse("file" in listed.records[0])

          // What it wrote was committed: Eagle's slug is taken now.
          const third = json(yield* chamber([
            "import", "--tenant", tenant.id, rtFile("third.json", JSON.stringify({ members: [{ name: "Eagle Two", status: "active", slug: "eagle" }] })),
            "--skip-invalid", "--json"
          ]))
          assert.strictEqual(third.refused, 1)
          assert.deepStrictEqual(third.counts, NONE)

          const lone = yield* chamber(["import", "--tenant", tenant.id, again, "--rejected", problems])
          assert.strictEqual(lone.code, 1)
          assert.match(lone.stderr, /--rejected goes with --skip-invalid\./)
        }), 180_000)

      it.effect("tenant create --admin: the chamber and its chamber_admin at once, who mints the first key; a bad email creates neither", () =>
        Effect.gen(function*() {
          const created = json(yield* chamber(["tenant", "create", "--name", "First Key Chamber", "--admin", "Ann@FirstKey.example", "--json"]))
          assert.strictEqual(created.admin.email, "ann@firstkey.example")
          assert.strictEqual(created.admin.role, "chamber_admin")
          const key = json(yield* chamber(["key", "mint", "--tenant", created.id, "--as", "ann@firstkey.example", "--name", "First", "--scopes", "all", "--json"]))
          assert.match(key.key, /^cck_/)

          const bad = yield* chamber(["tenant", "create", "--name", "No Admin Chamber", "--admin", "not-an-email", "--json"])
          assert.strictEqual(bad.code, 1)
          assert.strictEqual(JSON.parse(bad.stderr).error, "The email must be a valid email address.")
          const names = json(yield* chamber(["tenant", "list", "--json"])).map((t: { name: string }) => t.name)
          assert.include(names, "First Key Chamber")
          assert.notInclude(names, "No Admin Chamber")
        }), 180_000)
    })
  })
}
