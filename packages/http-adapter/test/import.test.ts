/**
 * The importer (docs/cli.md "Import") through the core library, on every storage runtime, checked
 * through the API: refs resolved across collections, the same validation and events as any other
 * write, and all or nothing: every bad record is reported (collection, index, ref, field), those
 * the file alone shows before anything is written, and nothing of the file is written.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { ImportInvalid, Importer, type ImportProgressEvent, Outbox } from "@chamber/core"
import { runtimes } from "@chamber/pg-adapter/testing"
import { call, chamberWithKey, serverOn } from "./fixture.ts"
import { tenThousand } from "@chamber/core/test/import-fixtures"

const document = () => ({
  members: [
    { ref: "m1", name: "Acme Hardware", status: "active", custom_fields: { tier: "Gold" } },
    { ref: "m2", name: "Beacon Realty", status: "pending" }
  ],
  contacts: [{ ref: "c1", first_name: "Ann", last_name: "Lee", email: "ann@acme.example", member_ref: "m1" }],
  events: [
    { ref: "e1", title: "Gala", starts_at: "2027-01-10T18:00:00Z", status: "published" },
    { ref: "e0", title: "Old Mixer", starts_at: "2025-01-10T18:00:00Z", status: "completed" }
  ],
  registrations: [{ event_ref: "e1", member_ref: "m1", contact_ref: "c1", status: "registered" }],
  deals: [{ ref: "d1", member_ref: "m2", title: "Free consult", status: "approved" }],
  invoices: [
    { ref: "i1", member_ref: "m1", lines: [{ description: "Dues", unit: "300.00" }], status: "open" },
    { ref: "i2", member_ref: "m2", lines: [{ description: "Dues", unit: "150.00" }] }
  ],
  payments: [
    { invoice_ref: "i1", method: "check", amount: "100.00", reference: "Check #1" },
    { invoice_ref: "i1", method: "card", amount: "200.00", gateway: "stripe" }
  ],
  sponsorships: [
    { member_ref: "m1", name: "Gold", status: "active", starts_on: "2026-01-01", amount_cents: 50000, invoice_ref: "i1", notes: "SECRET-NOTE", event_ref: "e1" }
  ],
  placements: [{ member_ref: "m2", ad_kind: "text", ad_headline: "Hi", status: "active", impressions: 200, clicks: 5, amount_cents: 9900, notes: "SECRET-NOTE" }],
  bookings: [{ booking_type_name: "Room A", starts_at: "2027-01-01T09:00:00Z", status: "confirmed", visitor_name: "SECRET-VISITOR", member_ref: "m1", contact_ref: "c1" }]
})

const SCOPES = "all"

const API_LISTS = ["/api/v1/members", "/api/v1/contacts", "/api/v1/events", "/api/v1/invoices", "/api/v1/payments", "/api/v1/deals", "/api/v1/sponsorships", "/api/v1/placements", "/api/v1/bookings"]

/** The first problem reported, of `count` in all. */
const firstProblem = (error: unknown, count: number) => {
  assert.instanceOf(error, ImportInvalid)
  const e = error as ImportInvalid
  assert.strictEqual(e.problem_count, count, e.message)
  return e.problems[0]!
}

for (const rt of runtimes()) {
  describe(`import on ${rt.name}`, () => {
    layer(serverOn(rt), { timeout: 120_000 })((it) => {
      it.effect("refs across every collection; the API shows the rows; the same events as any other write", () =>
        Effect.gen(function*() {
          const { tenant, key } = yield* chamberWithKey(SCOPES)
          const seen: Array<string> = []
          const result = yield* (yield* Importer).run(tenant.public_id, document(), { progress: (e) => seen.push(`${e.phase} ${e.done}/${e.total}`) })
          assert.deepStrictEqual(result.counts, {
            fields: 0,
            members: 2,
            contacts: 1,
            events: 2,
            registrations: 1,
            deals: 1,
            invoices: 2,
            payments: 2,
            sponsorships: 1,
            placements: 1,
            bookings: 1
          })
          // Every record is checked, then written: each pass is told as it begins and after each record.
          assert.deepStrictEqual(seen, [
            ...Array.from({ length: 15 }, (_, i) => `checking ${i}/14`),
            ...Array.from({ length: 15 }, (_, i) => `writing ${i}/14`)
          ])
          assert.isFalse(result.dryRun)
          assert.sameMembers(Object.keys(result.ids), ["m1", "m2", "c1", "e1", "e0", "d1", "i1", "i2"])

          const get = (path: string) => call("GET", path, { key }).pipe(Effect.map((r) => r.body.data))
          const members = yield* get("/api/v1/members")
          assert.deepStrictEqual(members.map((m: any) => [m.id, m.attributes.slug]), [[result.ids.m1, "acme-hardware"], [result.ids.m2, "beacon-realty"]])
          const registrations = yield* get(`/api/v1/events/${result.ids.e1}/registrations`)
          assert.deepInclude(registrations[0].attributes, { event_id: result.ids.e1, member_id: result.ids.m1, contact_id: result.ids.c1 })
          const events = yield* get("/api/v1/events?sort=starts_at")
          assert.deepStrictEqual(events.map((e: any) => e.attributes.status), ["completed", "published"])
          const invoices = yield* get("/api/v1/invoices?sort=created_at")
          assert.deepInclude(invoices[0].attributes, { member_id: result.ids.m1, status: "paid", number: "INV-000001", amount_paid_cents: 30000, balance_cents: 0 })
          assert.deepInclude(invoices[1].attributes, { member_id: result.ids.m2, status: "draft", number: null })
          const payments = yield* get("/api/v1/payments?sort=created_at")
          assert.deepStrictEqual(payments.map((p: any) => [p.attributes.gateway, p.attributes.amount_cents]), [[null, 10000], ["stripe", 20000]])
          const deals = yield* get("/api/v1/deals")
          assert.strictEqual(deals[0].attributes.status, "approved")

          // The internal fields the file carried are stored and never shown.
          const feeds = yield* Effect.forEach(["/api/v1/sponsorships", "/api/v1/placements", "/api/v1/bookings"], (path) => call("GET", path, { key }))
          for (const feed of feeds) {
            assert.strictEqual(feed.body.data.length, 1, JSON.stringify(feed.body))
            assert.notMatch(JSON.stringify(feed.body), /SECRET|amount_cents|invoice_id|notes|visitor|cancel_token/)
          }
          assert.deepInclude(feeds[0]!.body.data[0].attributes, { member_id: result.ids.m1, member_name: "Acme Hardware", event_id: result.ids.e1 })
          assert.deepInclude(feeds[1]!.body.data[0].attributes, { member_id: result.ids.m2, impressions: 200, clicks: 5, ctr: 0.025 })
          assert.deepInclude(feeds[2]!.body.data[0].attributes, { booking_type_name: "Room A", member_id: result.ids.m1, contact_id: result.ids.c1 })

          const kinds = (yield* (yield* Outbox).list(tenant.id)).map((e) => e.type)
          // One event per step, in order (ruling 34): the completed event is created, then ended;
          // the open invoice is a draft, then issued; each payment updates its invoice.
          assert.deepStrictEqual(kinds, [
            "member.created",
            "member.created",
            "contact.created",
            "event.created",
            "event.created",
            "event.updated",
            "event.registration.created",
            "deal.created",
            "deal.approved",
            "invoice.created",
            "invoice.updated",
            "invoice.issued",
            "invoice.created",
            "payment.created",
            "invoice.updated",
            "payment.created",
            "invoice.updated",
            "invoice.paid",
            "sponsorship.created",
            "placement.created",
            "booking.created"
          ])
        }))

      it.effect("one bad record: nothing of the file is written, and the error names collection, index, ref and field", () =>
        Effect.gen(function*() {
          const { tenant, key } = yield* chamberWithKey(SCOPES)
          const importer = yield* Importer
          const cases: ReadonlyArray<readonly [(d: any) => void, { collection: string; index: number; field: string | null }, RegExp]> = [
            [(d) => (d.members[1].name = ""), { collection: "members", index: 1, field: "name" }, /The name field is required/],
            [(d) => (d.contacts[0].member_ref = "nobody"), { collection: "contacts", index: 0, field: "member_ref" }, /names no earlier record of members/],
            [(d) => (d.registrations[0].event_ref = "m1"), { collection: "registrations", index: 0, field: "event_ref" }, /names no earlier record of events/],
            [(d) => (d.invoices[0].lines[0].unit = "3.001"), { collection: "invoices", index: 0, field: "lines.0.unit" }, /amount in dollars/],
            [(d) => (d.payments[1].amount = "200.01"), { collection: "payments", index: 1, field: null }, /outstanding balance of 200\.00 USD/],
            // m2 is then named by three records: each is reported too.
            [(d) => (d.members[1].ref = "m1"), { collection: "members", index: 1, field: "ref" }, /already used by members\[0\]/],
            [(d) => (d.deals[0].cta_url = "ftp://acme.example"), { collection: "deals", index: 0, field: "cta_url" }, /http:\/\/ or https:\/\//],
            [(d) => (d.sponsorships[0].amount_cents = -1), { collection: "sponsorships", index: 0, field: "amount_cents" }, /at least 0/],
            [(d) => (d.placements[0].member_ref = "c1"), { collection: "placements", index: 0, field: "member_ref" }, /names no earlier record of members/],
            [(d) => delete d.bookings[0].booking_type_name, { collection: "bookings", index: 0, field: "booking_type_id" }, /./]
          ]
          for (const [spoil, where, reason] of cases) {
            const doc = document()
            spoil(doc)
            const error = yield* importer.run(tenant.id, doc).pipe(Effect.flip)
            const p = firstProblem(error, where.field === "ref" ? 4 : 1)
            assert.deepStrictEqual({ collection: p.collection, index: p.index, field: p.field }, where)
            assert.strictEqual(p.ref, (doc as any)[where.collection][where.index].ref ?? null)
            assert.match(p.message, reason)
            const place = `${where.collection}[${where.index}]${where.field === null ? "" : `.${where.field}`}`
            assert.isTrue(error.message.startsWith(`${where.field === "ref" ? 4 : 1} record${where.field === "ref" ? "s are" : " is"} invalid; nothing was written.\n  ${place}`), error.message)
          }
          for (const path of API_LISTS) {
            assert.strictEqual((yield* call("GET", path, { key })).body.meta.total, 0, path)
          }
          assert.deepStrictEqual(yield* (yield* Outbox).list(tenant.id), [])
          // The numbers the failed imports took were given back.
          const ok = yield* importer.run(tenant.id, document())
          assert.strictEqual(ok.counts.invoices, 2)
          const invoices = (yield* call("GET", "/api/v1/invoices?status=paid", { key })).body.data
          assert.strictEqual(invoices[0].attributes.number, "INV-000001")
        }))

      it.effect("a document that is no import is refused before anything is written", () =>
        Effect.gen(function*() {
          const { tenant } = yield* chamberWithKey(SCOPES)
          const importer = yield* Importer
          for (const [doc, pattern] of [
            [[], /must be a JSON object of collections/],
            [{ member: [] }, /Unknown collection "member"/],
            [{ members: {} }, /The members collection must be a list/],
            [{ members: ["x"] }, /^1 record is invalid; nothing was written\.\n  members\[0\]: A record must be a JSON object\.$/]
          ] as const) {
            const error = yield* importer.run(tenant.id, doc).pipe(Effect.flip)
            assert.match(error.message, pattern)
          }
          const missing = yield* importer.run("chm_nope", { members: [] }).pipe(Effect.flip)
          assert.strictEqual(missing._tag, "TenantNotFound")
        }))

      it.effect("10,000 records with three bad ones: all three reported (collection, index, ref, field) before anything is written, with and without a dry run", () =>
        Effect.gen(function*() {
          const { tenant, key } = yield* chamberWithKey(SCOPES)
          const importer = yield* Importer
          for (const dryRun of [false, true]) {
            const phases = new Set<ImportProgressEvent["phase"]>()
            const error = yield* importer.run(tenant.id, tenThousand(), { dryRun, progress: (e) => phases.add(e.phase) }).pipe(Effect.flip)
            assert.instanceOf(error, ImportInvalid)
            const e = error as ImportInvalid
            assert.deepStrictEqual(e.problems, [
              { collection: "members", index: 2, ref: "m2", field: "status", message: "The selected status is invalid (expected one of: active, pending, lapsed, former)." },
              { collection: "members", index: 9_990, ref: "m9990", field: "email", message: "The email field must be a valid email address." },
              { collection: "contacts", index: 3, ref: null, field: "member_ref", message: 'The member ref "m10001" names no earlier record of members.' }
            ])
            assert.deepInclude({ problem_count: e.problem_count, record_count: e.record_count }, { problem_count: 3, record_count: 3 })
            assert.strictEqual(e.message.split("\n")[0], "3 records are invalid; nothing was written.")
            // Found by the check of the whole file: the writing never began.
            assert.deepStrictEqual([...phases], ["checking"], `dryRun ${dryRun}`)
          }
          for (const path of API_LISTS) assert.strictEqual((yield* call("GET", path, { key })).body.meta.total, 0, path)
          assert.deepStrictEqual(yield* (yield* Outbox).list(tenant.id), [])

          // Put right, the file passes the dry run, which writes nothing.
          const fixed = tenThousand()
          fixed.members[2]!.status = "active"
          fixed.members[9_990]!.email = "m9990@example.com"
          fixed.contacts[3]!.member_ref = "m3"
          const checked = yield* importer.run(tenant.id, fixed, { dryRun: true })
          assert.deepInclude(checked, { dryRun: true, ids: {} })
          assert.deepInclude(checked.counts, { members: 9_995, contacts: 5, events: 0 })
          assert.strictEqual((yield* call("GET", "/api/v1/members", { key })).body.meta.total, 0)
        }), 120_000)

      it.effect("every problem of every record is counted; the first 100 are reported", () =>
        Effect.gen(function*() {
          const { tenant } = yield* chamberWithKey(SCOPES)
          const members = Array.from({ length: 150 }, (_, i) => ({ ref: `m${i}`, name: `Member ${i}`, status: "gone", employee_count: -1 }))
          const e = (yield* (yield* Importer).run(tenant.id, { members }).pipe(Effect.flip)) as ImportInvalid
          assert.deepInclude({ problem_count: e.problem_count, record_count: e.record_count, shown: e.problems.length }, {
            problem_count: 300,
            record_count: 150,
            shown: 100
          })
          assert.deepStrictEqual(e.problems.slice(0, 3).map((p) => `${p.index}.${p.field}`), ["0.status", "0.employee_count", "1.status"])
          assert.strictEqual(e.summary, "150 records are invalid (300 problems); nothing was written; the first 100 problems follow.")
        }))

      it.effect("history the API reaches is taken, and the API's own rules stay: an ended deal, payments on invoices voided or marked uncollectible after them, a subscriber without names, slugs kept, a member without one", () =>
        Effect.gen(function*() {
          const { tenant, key } = yield* chamberWithKey(SCOPES)
          const lines = [{ description: "Dues", unit: "300.00" }]
          const result = yield* (yield* Importer).run(tenant.id, {
            members: [{ ref: "m1", name: "Acme Hardware", status: "lapsed" }, { ref: "m2", name: "Beacon Realty", status: "active", slug: "" }],
            contacts: [
              { ref: "c1", first_name: "", last_name: "", email: "news@reader.example", subscribed: true },
              { ref: "c2", first_name: "Ann", last_name: "Lee", email: "ann@acme.example" }
            ],
            events: [{ ref: "e1", title: "Gala Dinner", slug: "gala", starts_at: "2024-01-10T18:00:00Z", status: "cancelled" }],
            registrations: [{ event_ref: "e1", member_ref: "m1", status: "cancelled" }],
            deals: [{ ref: "d1", member_ref: "m1", title: "Spring sale", slug: "sale", starts_at: "2024-03-01T00:00:00Z", ends_at: "2024-04-01T00:00:00Z", status: "approved" }],
            invoices: [
              { ref: "i1", member_ref: "m1", lines, status: "void", number: "INV-000007" },
              { ref: "i2", member_ref: "m1", lines, status: "uncollectible" }
            ],
            payments: [
              { invoice_ref: "i1", method: "check", amount: "100.00" },
              { invoice_ref: "i2", method: "card", amount: "50.00", gateway: "stripe" }
            ]
          })
          const get = (path: string) => call("GET", path, { key }).pipe(Effect.map((r) => r.body.data))
          const invoices = yield* get("/api/v1/invoices?sort=created_at")
          assert.deepInclude(invoices[0].attributes, { status: "void", number: "INV-000007", amount_paid_cents: 10000, balance_cents: 20000 })
          assert.deepInclude(invoices[1].attributes, { status: "uncollectible", number: "INV-000008", amount_paid_cents: 5000, balance_cents: 25000 })
          assert.deepStrictEqual((yield* get("/api/v1/payments?sort=created_at")).map((p: any) => p.attributes.amount_cents), [10000, 5000])
          assert.deepInclude((yield* get("/api/v1/deals"))[0].attributes, { slug: "sale", ends_at: "2024-04-01T00:00:00.000Z", status: "approved" })
          assert.deepInclude((yield* get("/api/v1/events"))[0].attributes, { title: "Gala Dinner", slug: "gala", status: "cancelled" })
          assert.deepInclude((yield* get("/api/v1/contacts?sort=created_at"))[0].attributes, { first_name: "", last_name: "" })
          // A member whose slug was taken away (PATCH slug null) is exported with slug "": made without one.
          assert.deepStrictEqual((yield* get("/api/v1/members")).map((m: any) => m.attributes.slug), ["acme-hardware", null])
          // The subscriber is subscribed already (200); the other contact was not (201, re-subscribed).
          const subscribe = (email: string) => call("POST", "/api/v1/subscribers", { key, body: { email } }).pipe(Effect.map((r) => [r.status, r.body.data.id]))
          assert.deepStrictEqual(yield* subscribe("news@reader.example"), [200, result.ids.c1])
          assert.deepStrictEqual(yield* subscribe("ann@acme.example"), [201, result.ids.c2])
          // Payments on the voided invoice: each its payment.created and invoice.updated, no invoice.paid.
          const kinds = (yield* (yield* Outbox).list(tenant.id)).map((e) => e.type)
          assert.deepStrictEqual(kinds.slice(kinds.indexOf("payment.created")), ["payment.created", "invoice.updated", "payment.created", "invoice.updated", "contact.updated"])

          // Through the API the rules are as they were.
          const paid = yield* call("POST", `/api/v1/invoices/${result.ids.i1}/payments`, { key, body: { method: "check", amount: "1.00" } })
          assert.deepStrictEqual([paid.status, paid.body.message], [422, "This invoice is void; only an open invoice can take a payment."])
          const ended = yield* call("POST", "/api/v1/deals", { key, body: { member_id: result.ids.m1, title: "Old", ends_at: "2024-04-01T00:00:00Z" } })
          assert.deepStrictEqual([ended.status, ended.body.errors], [422, { ends_at: ["The ends at field must be a date after today."] }])
          const nameless = yield* call("POST", "/api/v1/contacts", { key, body: { first_name: "", last_name: "Lee" } })
          assert.deepStrictEqual([nameless.status, Object.keys(nameless.body.errors)], [422, ["first_name"]])
          // A draft that was voided was never issued, so it never took a payment: one on it is refused.
          const neverIssued = yield* (yield* Importer).run(tenant.id, {
            members: [{ ref: "x", name: "Late Inc", status: "active" }],
            invoices: [{ ref: "v", member_ref: "x", lines, status: "void" }],
            payments: [{ invoice_ref: "v", method: "check", amount: "1.00" }]
          }).pipe(Effect.flip)
          const refused = firstProblem(neverIssued, 1)
          assert.deepStrictEqual([refused.collection, refused.field, refused.message], ["payments", null, "This invoice is void; only an open invoice can take a payment."])
        }))

      it.effect("rules only the database can tell are met while writing: each broken one is reported, the rest still tried, and nothing is committed", () =>
        Effect.gen(function*() {
          const { tenant, key } = yield* chamberWithKey(SCOPES)
          const importer = yield* Importer
          const existing = yield* call("POST", "/api/v1/members", { key, body: { name: "Taken Inc", status: "active", slug: "taken" } })
          assert.strictEqual(existing.status, 201)
          const doc = document() as any
          doc.members[1].slug = "taken"
          doc.payments[1].amount = "200.01"

          // The file alone cannot show either: the dry run passes, and writes nothing.
          const checked = yield* importer.run(tenant.id, doc, { dryRun: true })
          assert.deepInclude(checked.counts, { members: 2, payments: 2, bookings: 1 })
          assert.strictEqual((yield* call("GET", "/api/v1/members", { key })).body.meta.total, 1)

          const e = (yield* importer.run(tenant.id, doc).pipe(Effect.flip)) as ImportInvalid
          assert.instanceOf(e, ImportInvalid)
          const unwritten = (ref: string, collection: string, index: number) =>
            `The member ref "${ref}" names ${collection}[${index}], which could not be written.`
          assert.deepStrictEqual(e.problems.map((p) => [p.collection, p.index, p.ref, p.field]), [
            ["members", 1, "m2", "slug"],
            ["deals", 0, "d1", "member_ref"],
            ["invoices", 1, "i2", "member_ref"],
            ["payments", 1, null, null],
            ["placements", 0, null, "member_ref"]
          ])
          assert.strictEqual(e.problems[0]!.message, "The slug has already been taken.")
          assert.strictEqual(e.problems[1]!.message, unwritten("m2", "members", 1))
          assert.match(e.problems[3]!.message, /more than the invoice's outstanding balance of 200\.00 USD/)
          for (const path of API_LISTS) {
            assert.strictEqual((yield* call("GET", path, { key })).body.meta.total, path === "/api/v1/members" ? 1 : 0, path)
          }
          assert.deepStrictEqual((yield* (yield* Outbox).list(tenant.id)).map((o) => o.type), ["member.created"])
        }))
    })
  })
}
