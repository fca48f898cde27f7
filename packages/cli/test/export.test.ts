/**
 * `chamber export` (docs/cli.md "Export"): a chamber exported, imported into a new chamber and
 * exported again gives the same document but for ids (the refs) — on the demo chamber and on a
 * generated one of 1,100 members (more than one of the exporter's 1,000-record pages), as JSON and
 * as CSV files, holding every collection and every state the API and the core library reach (a
 * subscriber without names, slugs kept when titles change, ended deals, payments on invoices
 * voided or marked uncollectible after them); invoices keep their numbers where they are free;
 * options that do not go together and an unknown chamber exit 1; a reader that closes the output
 * early ends a command as SIGPIPE would. A generated chamber of 100,000 members:
 * export-large.test.ts.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import { closeSync, existsSync, openSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { runtimes } from "@chamber/pg-adapter/testing"
import { exportProgress } from "../src/ExportProgress.ts"
import { changedThroughTheApi, type Doc, everyState, generated, generatedCounts, placed } from "./exportDocs.ts"
import { BIN, chamber, chambers, Env, envLayer, json, type Result } from "./harness.ts"
import { suiteDir } from "./tempDirs.ts"

const dir = suiteDir("export")

describe("export progress", () => {
  const recorder = () => {
    let text = ""
    return { stream: { write: (s: string) => (text += s) }, written: () => text }
  }
  it("on a terminal: one line redrawn at most every 100 ms, with the rate once a second has passed, ended at the last record", () => {
    const out = recorder()
    let now = 1_000_000
    const progress = exportProgress(out.stream, true, () => now)
    progress.tell({ done: 0, total: 3_000, collection: "fields" })
    now += 50
    progress.tell({ done: 1_000, total: 3_000, collection: "members" })
    now += 1_950
    progress.tell({ done: 2_000, total: 3_000, collection: "members" })
    now += 1_000
    progress.tell({ done: 3_000, total: 3_000, collection: "contacts" })
    assert.deepStrictEqual(out.written().split("\r").filter((f) => f !== ""), [
      `Exporting [${"-".repeat(30)}] 0/3,000  fields\x1b[K`,
      `Exporting [${"#".repeat(20)}${"-".repeat(10)}] 2,000/3,000  members, 1,000 a second, about 1 s left\x1b[K`,
      `Exporting [${"#".repeat(30)}] 3,000/3,000  contacts, 1,000 a second, done in 3 s\x1b[K\n`
    ])
  })
  it("elsewhere: a line every 5 s, none at the end", () => {
    const out = recorder()
    let now = 0
    const progress = exportProgress(out.stream, false, () => now)
    progress.tell({ done: 0, total: 10_000, collection: "fields" })
    now += 5_000
    progress.tell({ done: 5_000, total: 10_000, collection: "members" })
    now += 1_000
    progress.tell({ done: 6_000, total: 10_000, collection: "members" })
    now += 4_000
    progress.tell({ done: 10_000, total: 10_000, collection: "contacts" })
    assert.strictEqual(out.written(), "Exporting: 5,000 of 10,000 records (members), 1,000 a second, about 5 s left\n")
  })
})

const CSV_COLLECTIONS = ["fields", "members", "contacts", "events", "registrations", "deals", "invoices", "payments", "sponsorships", "placements", "bookings"]

for (const rt of runtimes()) {
  describe(`chamber export on ${rt.name}`, () => {
    const at = (name: string) => join(dir, `${rt.name}-${name}`)
    layer(envLayer(rt), { timeout: 1_200_000 })((it) => {
      /** The arguments exporting the chamber to a file. */
      const toFile = (tenant: string, name: string) => ["export", "--tenant", tenant, "--out", at(name), "--json"]
      /** The file an export wrote, read, from the command's result. */
      const written = (result: Result, name: string) => {
        const out = at(name)
        const done = json(result)
        assert.strictEqual(done.out, out)
        assert.isFalse(existsSync(`${out}.partial`))
        return { doc: JSON.parse(readFileSync(out, "utf8")) as Doc, out, counts: done.counts as Record<string, number> }
      }
      const create = (name: string) => ["tenant", "create", "--name", name, "--json"]
      const csvArgs = (csvDir: string) => readdirSync(csvDir).flatMap((f) => [`--${f.replace(/\.csv$/, "")}`, join(csvDir, f)])
      // Commands that do not depend on one another go through `chambers`: side by side on PostgreSQL.

      it.effect("the demo chamber: exported, imported into a new chamber and exported again, the same document but for ids; as CSV files too", () =>
        Effect.gen(function*() {
          const demo = json(yield* chamber(["demo", "--json"])).tenant.id as string
          const [madeCopy, madeFromCsv] = yield* chambers([create("Demo Copy"), create("Demo from CSV")])
          const [copy, fromCsv] = [json(madeCopy!).id as string, json(madeFromCsv!).id as string]
          const csvDir = at("demo-csv")
          const [exportedFirst, exportedCsv] = yield* chambers([toFile(demo, "demo.json"), ["export", "--tenant", demo, "--format", "csv", "--out", csvDir, "--json"]])
          const first = written(exportedFirst!, "demo.json")
          // Every ref is `<collection>:<id>`, unique, and each `<thing>_ref` names an earlier record.
          placed(first.doc)
          assert.strictEqual(first.counts.members, 160)
          for (const c of CSV_COLLECTIONS) assert.isAbove(first.doc[c]!.length, 0, c)
          // Hidden custom fields go too; issued invoices carry their numbers.
          assert.deepStrictEqual(first.doc.fields!.map((f) => f.key).sort(), ["board_notes", "membership_tier"])
          assert.isTrue(first.doc.invoices!.some((i) => typeof i.number === "string" && /^INV-\d{6}$/.test(i.number)))
          const csv = json(exportedCsv!)
          assert.deepStrictEqual(readdirSync(csvDir).sort(), CSV_COLLECTIONS.map((c) => `${c}.csv`).sort())
          assert.strictEqual(csv.files.members, join(csvDir, "members.csv"))
          assert.match(readFileSync(join(csvDir, "members.csv"), "utf8").split("\n")[0]!, /^ref,name,slug,.*,custom_fields,custom_fields\.board_notes,custom_fields\.membership_tier$/)

          const [imported, importedCsv] = yield* chambers([["import", "--tenant", copy, first.out, "--json"], ["import", "--tenant", fromCsv, ...csvArgs(csvDir), "--json"]])
          assert.strictEqual(json(imported!).counts.fields, 2)
          json(importedCsv!)
          // The copy exported to stdout, the summary on stderr.
          const [piped, exportedThird] = yield* chambers([["export", "--tenant", copy], toFile(fromCsv, "demo-from-csv.json")])
          assert.strictEqual(piped!.code, 0, piped!.stderr)
          assert.match(piped!.stderr, /Exported 2 fields, 160 members, 60 contacts, 6 events, .* \(\d+ records\) in [\d.]+ s to stdout/)
          const second = JSON.parse(piped!.stdout) as Doc
          assert.deepStrictEqual(placed(second), placed(first.doc))
          // The numbers were free in the new chamber: kept.
          assert.deepStrictEqual(second.invoices!.map((i) => i.number), first.doc.invoices!.map((i) => i.number))
          assert.deepStrictEqual(placed(written(exportedThird!, "demo-from-csv.json").doc), placed(first.doc))
        }), 1_200_000)

      it.effect("a generated chamber of 1,100 members: the round trip as JSON and as CSV; invoice numbers kept when free, else the next one", () =>
        Effect.gen(function*() {
          const [source, copy, fromCsv] = (yield* chambers([
            [...create("Generated"), "--admin", "ann@generated.example"],
            create("Generated Copy"),
            create("Generated from CSV")
          ])).map((r) => json(r).id as string)
          const input = at("generated-input.json")
          writeFileSync(input, JSON.stringify(generated()))
          const ids = json(yield* chamber(["import", "--tenant", source!, input, "--json"])).ids as Record<string, number>
          // Then what the API does to a chamber: a subscriber without names, titles changed (slugs stay), a slug taken away, a payment.
          yield* changedThroughTheApi(source!, "ann@generated.example", ids)
          const first = written(yield* chamber(toFile(source!, "generated.json")), "generated.json")
          placed(first.doc)
          assert.deepStrictEqual(Object.fromEntries(Object.entries(first.counts).filter(([, n]) => n > 0)), generatedCounts())
          everyState(first.doc)

          const csvDir = at("generated-csv")
          const [imported, exportedCsv] = yield* chambers([["import", "--tenant", copy!, first.out, "--json"], ["export", "--tenant", source!, "--format", "csv", "--out", csvDir, "--json"]])
          json(imported!)
          json(exportedCsv!)
          // In the copy every number is taken: an imported invoice asking for one gets the next after the highest kept.
          const numbers = first.doc.invoices!.flatMap((i) => (typeof i.number === "string" ? [i.number] : []))
          const highest = Math.max(...numbers.map((n) => Number(n.slice(4))))
          const more = at("more.json")
          writeFileSync(more, JSON.stringify({
            members: [{ ref: "x", name: "Late", status: "active" }],
            invoices: [
              { ref: "taken", member_ref: "x", status: "open", number: numbers[0], lines: [{ description: "Dues", unit: "1.00" }] },
              { ref: "free", member_ref: "x", status: "open", number: "OLD-7", lines: [{ description: "Dues", unit: "1.00" }] }
            ]
          }))
          for (const r of yield* chambers([["import", "--tenant", copy!, more, "--json"], ["import", "--tenant", fromCsv!, ...csvArgs(csvDir), "--json"]])) json(r)
          const [exportedSecond, exportedThird] = yield* chambers([toFile(copy!, "generated-copy.json"), toFile(fromCsv!, "generated-from-csv.json")])
          const second = written(exportedSecond!, "generated-copy.json")
          assert.deepStrictEqual(second.doc.invoices!.slice(-2).map((i) => i.number), [`INV-${String(highest + 1).padStart(6, "0")}`, "OLD-7"])
          // But for that later member and its two invoices, the copy is the source.
          assert.strictEqual(second.doc.members!.at(-1)!.name, "Late")
          const kept = { ...second.doc, members: second.doc.members!.slice(0, -1), invoices: second.doc.invoices!.slice(0, -2) }
          assert.deepStrictEqual(placed(kept), placed(first.doc))
          assert.deepStrictEqual(placed(written(exportedThird!, "generated-from-csv.json").doc), placed(first.doc))
        }), 1_200_000)

      it.effect("--format csv without --out, an unknown format, an unknown chamber: exit 1 with a plain message; the import checks custom field definitions", () =>
        Effect.gen(function*() {
          const [noDir, format, unknown] = yield* chambers([
            ["export", "--tenant", "chm_nope", "--format", "csv"],
            ["export", "--tenant", "chm_nope", "--format", "xml", "--json"],
            ["export", "--tenant", "chm_nope"]
          ])
          assert.strictEqual(noDir!.code, 1)
          assert.match(noDir!.stderr, /--format csv writes a file per collection: give the directory with --out DIR\./)
          assert.strictEqual(format!.code, 1)
          assert.deepStrictEqual(JSON.parse(format!.stderr), { error: '--format is json or csv, not "xml".' })
          assert.strictEqual(unknown!.code, 1)
          assert.strictEqual(unknown!.stdout, "")
          assert.match(unknown!.stderr, /chm_nope/)

          // The import checks custom field definitions as `field add` does; a key the chamber has is refused while writing.
          const tenant = json(yield* chamber(create("Fields"))).id as string
          const bad = at("bad-fields.json")
          writeFileSync(bad, JSON.stringify({ fields: [{ resource: "deal", key: "Tier", label: "" }, { resource: "member", key: "tier", label: "Tier" }] }))
          const refused = yield* chamber(["import", "--tenant", tenant, bad, "--json"])
          assert.strictEqual(refused.code, 1)
          assert.deepStrictEqual(JSON.parse(refused.stderr).problems.map((p: { field: string }) => p.field), ["resource", "key", "label"])
          const twice = at("twice-fields.json")
          writeFileSync(twice, JSON.stringify({ fields: [{ resource: "member", key: "tier", label: "Tier" }, { resource: "member", key: "tier", label: "Tier again" }] }))
          const taken = yield* chamber(["import", "--tenant", tenant, twice, "--json"])
          assert.strictEqual(taken.code, 1)
          assert.deepStrictEqual(JSON.parse(taken.stderr).problems, [
            { collection: "fields", index: 1, ref: null, field: "key", message: "The member field tier already exists." }
          ])
        }), 180_000)

      it.effect("a reader that closes the output early (`| head`) ends the command as SIGPIPE would: at once, quietly, status 141; a full disk is one line", () =>
        Effect.gen(function*() {
          const env = yield* Env
          const tenant = json(yield* chamber(create("Read Early"))).id as string
          const members = at("read-early.json")
          writeFileSync(members, JSON.stringify({ members: Array.from({ length: 3_000 }, (_, i) => ({ name: `Member ${i}`, status: "active" })) }))
          json(yield* chamber(["import", "--tenant", tenant, members, "--json"]))
          /** `args` with stdout read up to its first chunk, then closed. */
          const readOne = (args: ReadonlyArray<string>) =>
            Effect.promise(() =>
              new Promise<Result>((resolve) => {
                const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, REDIS_URL: "", ...env, NO_COLOR: "1" } })
                let stderr = ""
                child.stdout.once("data", () => child.stdout.destroy())
                child.stderr.on("data", (d) => (stderr += d))
                child.on("close", (code) => resolve({ code, stdout: "", stderr }))
              })
            )
          // An export, and a feed followed until Ctrl-C (pages of 100 events, one member.created a member).
          const runs = [["export", "--tenant", tenant, "--json"], ["changes", "--tenant", tenant, "--follow", "--json"]]
          for (const args of runs) {
            const ended = yield* readOne(args)
            assert.strictEqual(ended.code, 141, `${args.join(" ")}: ${ended.stderr}`)
            assert.notMatch(ended.stderr, /error|EPIPE|node:/i)
          }
          // Output that cannot be written (a full disk) is said in one line, status 1.
          if (existsSync("/dev/full")) {
            const full = yield* Effect.promise(() =>
              new Promise<Result>((resolve) => {
                const out = openSync("/dev/full", "w")
                const child = spawn(process.execPath, [BIN, "export", "--tenant", tenant, "--json"], {
                  env: { ...process.env, REDIS_URL: "", ...env, NO_COLOR: "1" },
                  stdio: ["ignore", out, "pipe"]
                })
                closeSync(out)
                let stderr = ""
                child.stderr!.on("data", (d) => (stderr += d))
                child.on("close", (code) => resolve({ code, stdout: "", stderr }))
              })
            )
            assert.deepStrictEqual([full.code, full.stderr], [1, `${JSON.stringify({ error: "Cannot write the output: ENOSPC: no space left on device, write" })}\n`])
          }
        }))
    })
  })
}
