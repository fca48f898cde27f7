/**
 * `chamber export` (docs/cli.md "Export"): a chamber exported, imported into a new chamber and
 * exported again gives the same document but for ids (the refs) — on the demo chamber and on a
 * generated one of 1,100 members (more than one of the exporter's 1,000-record pages), as JSON and
 * as CSV files, holding every state the API and the core library reach (a subscriber without
 * names, slugs kept when titles change, ended deals, payments on invoices voided or marked
 * uncollectible after them); invoices keep their numbers where they are free; options that do not
 * go together and an unknown chamber exit 1.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { runtimes } from "@chamber/pg-adapter/testing"
import { exportProgress } from "../src/ExportProgress.ts"
import { chamber, chambers, envLayer, json, type Result, serving } from "./harness.ts"
import { suiteDir } from "./tempDirs.ts"

const dir = suiteDir("export")

type Doc = Record<string, Array<Record<string, unknown>>>

/** One request to the API of a running `chamber serve`: its status and JSON body. */
const send = (port: number, method: string, path: string, key: string, body: unknown) =>
  Effect.promise(async () => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify(body)
    })
    return { status: res.status, body: await res.json() as unknown }
  })

/** The document with each ref (`members:12`) as its record's place (`members#0`): equal documents are equal but for ids. */
const placed = (doc: Doc): Doc => {
  const places = new Map<unknown, string>()
  for (const [collection, records] of Object.entries(doc)) records.forEach((r, i) => places.set(r.ref, `${collection}#${i}`))
  return Object.fromEntries(Object.entries(doc).map(([collection, records]) => [
    collection,
    records.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, k === "ref" || k.endsWith("_ref") ? places.get(v) ?? `missing ${String(v)}` : v])))
  ]))
}

/** Every ref is `<collection>:<id>`, unique in the document, and each `<thing>_ref` names an earlier record. */
const wellReferenced = (doc: Doc) => {
  const seen = new Set<unknown>()
  for (const [collection, records] of Object.entries(doc)) {
    for (const r of records) {
      assert.match(String(r.ref), new RegExp(`^${collection}:\\d+$`))
      for (const [k, v] of Object.entries(r)) if (k.endsWith("_ref")) assert.isTrue(seen.has(v), `${String(r.ref)}.${k} names ${String(v)}`)
      assert.isFalse(seen.has(r.ref))
      seen.add(r.ref)
    }
  }
}

/**
 * 1,100 members (past one export page of 1,000) with custom fields, contacts of some (subscribers
 * among them), events in every state with registrations, deals that have ended, invoices in every
 * state with payments, some voided or marked uncollectible after them.
 */
const generated = (): Doc => {
  const statuses = ["active", "pending", "lapsed", "former"]
  const members = Array.from({ length: 1_100 }, (_, i) => ({
    ref: `m${i}`,
    name: i % 97 === 0 ? `Member "${i}", Inc.\nBranch` : `Member ${i}`,
    status: statuses[i % 4],
    email: `m${i}@example.com`,
    employee_count: i % 50,
    directory_visible: i % 2 === 0,
    ...(i % 7 === 0 ? { secondary_industries: ["Retail", "Wholesale"] } : {}),
    ...(i % 11 === 0 ? { slogan: "" } : {}),
    custom_fields: i % 3 === 0 ? { tier: ["Gold", "Silver"][i % 2], notes: "hidden" } : i % 5 === 0 ? { tier: "", rank: 3 } : {}
  }))
  // Every tenth is subscribed to the newsletter; every thirtieth one a subscriber without names, as POST /subscribers makes them.
  const contacts = Array.from({ length: 150 }, (_, i) => ({
    ref: `c${i}`,
    first_name: i % 30 === 1 ? "" : `First${i}`,
    last_name: i % 30 === 1 ? "" : i % 13 === 0 ? "O'Brien, Jr." : `Last${i}`,
    ...(i % 4 === 0 ? {} : { member_ref: `m${i * 6}` }),
    ...(i % 10 === 1 ? { subscribed: true, email: `c${i}@example.com` } : {}),
    custom_fields: i % 2 === 0 ? { topic: "events" } : {}
  }))
  const events = [
    { ref: "e0", title: "Gala", starts_at: "2027-01-10T18:00:00Z", status: "published", capacity: 200 },
    { ref: "e1", title: "Mixer", starts_at: "2025-03-10T18:00:00Z", ends_at: "2025-03-10T20:00:00Z", status: "completed" },
    { ref: "e2", title: "Picnic", starts_at: "2027-06-10T12:00:00Z", status: "cancelled" }
  ]
  const registrations = [
    ...Array.from({ length: 30 }, (_, i) => ({ event_ref: "e0", member_ref: `m${i}`, ...(i % 3 === 0 ? { contact_ref: `c${i}` } : {}) })),
    // On the past and the cancelled event: attended, cancelled.
    { event_ref: "e1", member_ref: "m1", status: "attended", registered_at: "2025-03-01T10:00:00.000Z", checked_in_at: "2025-03-10T18:05:00.000Z" },
    { event_ref: "e2", member_ref: "m2", status: "cancelled" }
  ]
  // Deals that have ended (in the past, and today), one running, one rejected: an ended one is history the import takes.
  const today = new Date().toISOString().slice(0, 10)
  const deals = [
    { ref: "d0", member_ref: "m3", title: "Spring sale", starts_at: "2024-03-01T00:00:00.000Z", ends_at: "2024-04-01T00:00:00.000Z", status: "approved" },
    { ref: "d1", member_ref: "m4", title: "Lunch special", ends_at: `${today}T23:00:00.000Z`, status: "approved", audience: "members" },
    { ref: "d2", member_ref: "m5", title: "Free consult", ends_at: "2099-01-01T00:00:00.000Z", discount_label: "Free", is_featured: true },
    { ref: "d3", member_ref: "m6", title: "Too good", status: "rejected", cta_url: "https://m6.example/deal" }
  ]
  const invoiceStatuses = ["open", "draft", "void", "uncollectible", "open"]
  const invoices: Array<Record<string, unknown>> = Array.from({ length: 40 }, (_, i) => ({
    ref: `i${i}`,
    member_ref: `m${i * 10}`,
    status: invoiceStatuses[i % 5],
    lines: [{ description: "Dues", unit: "450.00" }, { description: "Listing", unit: "12.50", quantity: 2 }],
    ...(i % 2 === 0 ? { memo: "Thank you" } : {})
  }))
  // Issued, paid in part, then voided or marked uncollectible: their payments follow them.
  invoices.push(
    { ref: "i40", member_ref: "m7", status: "void", number: "INV-000900", lines: [{ description: "Dues", unit: "300.00" }] },
    { ref: "i41", member_ref: "m8", status: "uncollectible", lines: [{ description: "Dues", unit: "300.00" }] }
  )
  // Invoices 0, 4, 10, 14 … are open: some paid in full, some in part.
  const payments = [
    ...invoices.filter((inv) => inv.status === "open").slice(0, 8).map((inv, i) => ({
      invoice_ref: inv.ref,
      method: "check",
      amount: i % 2 === 0 ? "475.00" : "100.00",
      reference: `Check #${i}`
    })),
    { invoice_ref: "i40", method: "check", amount: "100.00", received_on: "2025-02-01" },
    { invoice_ref: "i41", method: "card", amount: "50.00", gateway: "stripe" },
    { invoice_ref: "i41", method: "cash", amount: "25.00" }
  ]
  return {
    fields: [
      { resource: "member", key: "tier", label: "Tier", api_visible: true },
      { resource: "member", key: "notes", label: "Notes", api_visible: false },
      { resource: "contact", key: "topic", label: "Topic" }
    ],
    members,
    contacts,
    events,
    registrations,
    deals,
    invoices,
    payments
  }
}

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
          wellReferenced(first.doc)
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
          yield* Effect.scoped(Effect.gen(function*() {
            const { port } = yield* serving(["--no-relay"])
            const key = json(yield* chamber(["key", "mint", "--tenant", source!, "--as", "ann@generated.example", "--name", "k", "--scopes", "all", "--json"])).key as string
            for (const [method, path, body, status] of [
              ["POST", "/api/v1/subscribers", { email: "reader@example.com" }, 201],
              ["PATCH", `/api/v1/events/${ids.e0}`, { title: "Winter Gala" }, 200],
              ["PATCH", `/api/v1/deals/${ids.d2}`, { title: "Free consultation", status: "approved" }, 200],
              ["PATCH", `/api/v1/members/${ids.m9}`, { status: "lapsed", slug: null }, 200],
              ["POST", `/api/v1/invoices/${ids.i4}/payments`, { method: "ach", amount: "10.00", received_on: "2026-01-05" }, 201]
            ] as const) {
              const answer = yield* send(port, method, path, key, body)
              assert.strictEqual(answer.status, status, `${method} ${path}: ${JSON.stringify(answer.body)}`)
            }
          }))
          const first = written(yield* chamber(toFile(source!, "generated.json")), "generated.json")
          wellReferenced(first.doc)
          assert.deepStrictEqual(
            Object.fromEntries(Object.entries(first.counts).filter(([, n]) => n > 0)),
            { fields: 3, members: 1_100, contacts: 151, events: 3, registrations: 32, deals: 4, invoices: 42, payments: 12 }
          )
          // Each state is in the document: a subscriber without names, a slug kept from the old title, ended deals, payments on invoices that ended unpaid.
          assert.deepInclude(first.doc.contacts!.at(-1)!, { first_name: "", last_name: "", email: "reader@example.com", subscribed: true })
          assert.deepInclude(first.doc.contacts![1]!, { first_name: "", subscribed: true })
          assert.strictEqual(first.doc.contacts![0]!.subscribed, false)
          assert.deepInclude(first.doc.events![0]!, { title: "Winter Gala", slug: "gala" })
          assert.deepInclude(first.doc.deals![2]!, { title: "Free consultation", slug: "free-consult", status: "approved" })
          assert.deepInclude(first.doc.deals![0]!, { ends_at: "2024-04-01T00:00:00.000Z" })
          assert.deepInclude(first.doc.members![9]!, { status: "lapsed", slug: "" })
          assert.deepInclude(first.doc.invoices![40]!, { status: "void", number: "INV-000900" })
          assert.deepInclude(first.doc.invoices![41]!, { status: "uncollectible" })
          const paying = (invoice: Record<string, unknown>) => first.doc.payments!.filter((p) => p.invoice_ref === invoice.ref).map((p) => p.amount)
          assert.deepStrictEqual([paying(first.doc.invoices![40]!), paying(first.doc.invoices![41]!)], [["100.00"], ["50.00", "25.00"]])
          // Kept as given: an empty string, a hidden custom field, a number in custom fields; a fully paid invoice is exported open, with its payment.
          const m0 = first.doc.members![0]!
          assert.deepStrictEqual(m0.custom_fields, { tier: "Gold", notes: "hidden" })
          assert.strictEqual(first.doc.members![11]!.slogan, "")
          assert.deepStrictEqual(first.doc.members![5]!.custom_fields, { tier: "", rank: 3 })
          assert.strictEqual(first.doc.invoices![0]!.status, "open")

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
    })
  })
}
