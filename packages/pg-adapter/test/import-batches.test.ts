/**
 * The import's set-wise writes (core ImportBatchWrites.ts, ImportBatchesSql.ts) on every storage
 * runtime: one document of every collection imported set-wise into one chamber and through the
 * services one record at a time into another gives the same change feed (kinds, bodies but for ids
 * and times, positions) and the same deliveries, with each batched collection written by one
 * statement, and the same refusals; invoices of every status and payments of every kind make the
 * same rows, numbers and balances; 10,000 members and contacts give one event each and a delivery
 * each to a subscription; a chamber being deleted is refused.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as SqlClient from "effect/sql/SqlClient"
import { Hooks, importBatch, Importer, ImportHolds, type ImportOptions, Invoices, Members, Outbox, Tenants } from "@chamber/core"
import { StorageLive } from "../src/index.ts"
import { onDatabase, runtimes } from "./harness.ts"

/** Ids and times replaced by placeholders: what two chambers given the same document share. */
const shape = (value: unknown): unknown => JSON.parse(JSON.stringify(value), (key, v) =>
  (key === "id" || key.endsWith("_id")) && typeof v === "number" ? "<id>" : key.endsWith("_at") && typeof v === "string" ? "<time>" : v)

/**
 * Members past one set-wise batch (the importer writes 1,000 at a time), so the second batch
 * follows written ones; and records of every other collection, in each of the forms their
 * services treat apart: events ended (made, then ended), approved deals (two events about one
 * deal, the second held behind the first), booking types by name (made once) and by id, internal
 * fields; invoices and payments, written one by one either way, between them.
 */
const document = () => ({
  members: [
    ...Array.from({ length: 1_010 }, (_, i) => ({ ref: `m${i}`, name: i % 3 === 0 ? "Acme" : `Member ${i % 400}`, status: "active", custom_fields: { tier: "gold", hidden: i } })),
    { ref: "x1", name: "Acme", slug: "acme-9999", status: "pending" },
    { ref: "x2", name: "Élan Café", status: "active", email: "elan@example.com", phone: "555-0100" }
  ],
  contacts: Array.from({ length: 40 }, (_, i) => ({ ref: `c${i}`, first_name: "Ann", last_name: `Lee ${i}`, ...(i % 2 === 0 ? { member_ref: `m${i}` } : {}) })),
  events: [
    { ref: "e1", title: "Gala", starts_at: "2027-01-10T18:00:00Z", status: "published" },
    { ref: "e2", title: "Called off", starts_at: "2027-02-10T18:00:00Z", status: "cancelled", capacity: 40 },
    { ref: "e3", title: "Gala", starts_at: "2025-03-10T18:00:00Z", ends_at: "2025-03-10T22:00:00Z", status: "completed", event_type: "member", is_public: true },
    { ref: "e4", title: "Ünïcode Mixer!", starts_at: "2027-04-10T18:00:00Z", event_type: "not ours", description: "Drinks." }
  ],
  registrations: [
    { event_ref: "e1", member_ref: "m1", contact_ref: "c1", status: "registered" },
    { event_ref: "e1", first_name: "Bo", last_name: "Kim", email: "bo@example.com", guest_count: 2, registered_at: "2026-12-01T15:04:05Z" },
    { event_ref: "e3", contact_ref: "c2", status: "attended" }
  ],
  deals: [
    { ref: "d1", member_ref: "m1", title: "Free consult", status: "approved", ends_at: "2031-01-01T00:00:00Z" },
    { member_ref: "m2", title: "20% off", discount_label: "20% off", terms: "One each." },
    { member_ref: "m1", title: "Free consult", status: "approved", audience: "members", is_featured: true }
  ],
  invoices: [{ ref: "i1", member_ref: "m1", lines: [{ description: "Dues", unit: "300.00" }], status: "open" }],
  payments: [{ invoice_ref: "i1", method: "check", amount: "100.00" }],
  sponsorships: [
    { member_ref: "m1", name: "Gold", status: "active", starts_on: "2026-01-01", amount_cents: 50000, invoice_ref: "i1", notes: "Banner.", event_ref: "e1" },
    { name: "Wall", kind: "logo_wall", tier: "Silver" }
  ],
  placements: [
    { member_ref: "m2", ad_headline: "Hi", ad_image_url: "https://cdn.example.com/a.png", status: "active", impressions: 200, clicks: 5 },
    { ad_kind: "text", ad_body: "Spring sale", amount_cents: 9900, notes: "Paid." }
  ],
  bookings: [
    { booking_type_name: "Room A", starts_at: "2027-01-01T09:00:00Z", member_ref: "m1", contact_ref: "c1", visitor_name: "Ann Lee" },
    { booking_type_name: " Room B ", starts_at: "2027-01-02T09:00:00Z", status: "cancelled" },
    { booking_type_name: "Room A", starts_at: "2027-01-03T09:00:00Z", cancel_token: "kept-token", status: "cancelled", cancelled_at: "2026-12-30T09:00:00Z" }
  ]
})

/**
 * Invoices of every status an import brings, numbers kept, taken and given, and payments of
 * every kind (manual and gateway, partial and in full, before a void or an uncollectible),
 * each collection past one batch, so the second batch numbers and pays after the first.
 */
const billing = () => {
  const line = (unit: string, quantity?: number) => ({ description: "Dues", unit, ...(quantity === undefined ? {} : { quantity }) })
  const bulk = Array.from({ length: 1_000 }, (_, i) => i)
  return {
    members: [0, 1, 2].map((i) => ({ ref: `m${i}`, name: `Biller ${i}`, status: "active" })),
    invoices: [
      { ref: "draft", member_ref: "m0", lines: [line("100.00"), line("25.50", 2)], memo: "Draft." },
      { ref: "open", member_ref: "m0", lines: [line("300.00")], status: "open" },
      // Free in the chamber: kept, and the sequence moves on to it.
      { ref: "kept", member_ref: "m1", lines: [line("50.00")], status: "open", number: "INV-000050" },
      { ref: "legacy", member_ref: "m1", lines: [line("80.00")], status: "open", number: "LEGACY-7" },
      // Taken, one by the chamber before the import and one by the import: the next numbers.
      { ref: "taken", member_ref: "m1", lines: [line("80.00")], status: "open", number: "INV-000050" },
      { ref: "taken-before", member_ref: "m1", lines: [line("80.00")], status: "open", number: "INV-000001" },
      { ref: "zero", member_ref: "m2", lines: [line("0.00")], status: "open" },
      { ref: "paid", member_ref: "m2", lines: [line("120.00", 2)], status: "open" },
      { ref: "void", member_ref: "m2", lines: [line("10.00")], status: "void" },
      { ref: "void-numbered", member_ref: "m2", lines: [line("10.00")], status: "void", number: "OLD-1" },
      { ref: "void-paid", member_ref: "m0", lines: [line("200.00")], status: "void", number: "OLD-2" },
      { ref: "uncollectible", member_ref: "m0", lines: [line("90.00")], status: "uncollectible", memo: "Gone." },
      ...bulk.map((i) => ({ ref: `b${i}`, member_ref: `m${i % 3}`, lines: [line(`${i + 1}.00`)], ...(i % 4 === 0 ? {} : { status: "open" }) }))
    ],
    payments: [
      { invoice_ref: "open", method: "check", amount: "100.00", reference: "Check #1", received_on: "2026-10-01", notes: "Front desk." },
      { invoice_ref: "paid", method: "card", amount: "40.00", gateway: "stripe", reference: "ch_1" },
      { invoice_ref: "paid", method: "ach", amount: "200.00" },
      // Made before the invoice ended: it takes them and keeps its status, even paid off.
      { invoice_ref: "void-paid", method: "cash", amount: "50.00" },
      { invoice_ref: "void-paid", method: "card", amount: "150.00", gateway: "square" },
      { invoice_ref: "uncollectible", method: "check", amount: "30.00" },
      // Half a dollar off each open one, and every third paid off right after.
      ...bulk.filter((i) => i % 4 !== 0).flatMap((i) => [
        { invoice_ref: `b${i}`, method: "other", amount: "0.50" },
        ...(i % 3 === 0 ? [{ invoice_ref: `b${i}`, method: "card", amount: `${i}.50`, gateway: "stripe" }] : [])
      ])
    ]
  }
}

/** Every kind of event the document makes, to a subscription of each chamber. */
const KINDS = [
  "member.created", "contact.created", "event.created", "event.updated", "event.registration.created", "deal.created", "deal.approved",
  "invoice.created", "invoice.issued", "invoice.updated", "invoice.paid", "payment.created", "sponsorship.created", "placement.created", "booking.created"
] as const

const chamber = (name: string) =>
  Effect.gen(function*() {
    const tenants = yield* Tenants
    const tenant = yield* tenants.create({ name })
    yield* tenants.addField(tenant.id, { resource: "member", key: "tier", label: "Tier", api_visible: true })
    yield* tenants.addField(tenant.id, { resource: "member", key: "hidden", label: "Hidden", api_visible: false })
    yield* (yield* Hooks).create(tenant.id, { url: "https://hooks.example.com/in", events: [...KINDS] })
    // Taken before the import: generated slugs go past it, an explicit one naming it is refused.
    yield* (yield* Members).create(tenant.id, { name: "Acme", slug: "acme-2", status: "active" })
    return tenant.id
  }).pipe(Effect.orDie)

const feed = (tenantId: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const events = yield* (yield* Outbox).list(tenantId)
    const positions = yield* sql<{ readonly position: string }>`SELECT position::text FROM outbox_events WHERE tenant_id = ${tenantId} ORDER BY id`
    const deliveries = yield* sql<{ readonly type: string; readonly resource: string; readonly held: boolean; readonly followed: boolean }>`
      SELECT e.type, d.resource, d.held, d.followed FROM webhook_deliveries d JOIN outbox_events e ON e.id = d.event_id
      WHERE d.tenant_id = ${tenantId} ORDER BY d.id`
    return {
      events: events.map((e) => ({ type: e.type, data: shape(e.data) })),
      positions: positions.map((p) => Number(p.position)),
      // held: waits behind an earlier one of its subscription and resource; followed: one waits behind it.
      deliveries: deliveries.map((d) => `${d.type} ${d.resource.replace(/\d+$/, "")}${d.held ? " held" : ""}${d.followed ? " followed" : ""}`)
    }
  })

const importBoth = (doc: unknown, options: ImportOptions = {}) =>
  Effect.gen(function*() {
    const importer = yield* Importer
    const [a, b] = [yield* chamber(`Batched ${Math.random()}`), yield* chamber(`Services ${Math.random()}`)]
    const batched = yield* Effect.exit(importer.run(a, doc, options))
    const services = yield* Effect.exit(importer.run(b, doc, { ...options, batched: false }))
    return { a, b, batched, services }
  })

/** The batches `records` of one collection are written in: smaller where an import is written in slices (the embedded database). */
const batchesOf = (records: number) =>
  Effect.gen(function*() {
    const holds = yield* ImportHolds
    return Math.ceil(records / importBatch(holds.sliced))
  })

for (const rt of runtimes()) {
  describe(`an import's set-wise writes on ${rt.name}`, () => {
    layer(onDatabase(rt, (config) => StorageLive(config)), { timeout: 300_000, excludeTestServices: true })((it) => {
      it.effect("fire what the services fire: the same events, bodies, positions and deliveries, and the same ids for the refs", () =>
        Effect.gen(function*() {
          const { a, b, batched, services } = yield* importBoth(document())
          assert.isTrue(Exit.isSuccess(batched) && Exit.isSuccess(services))
          const [fa, fb] = [yield* feed(a), yield* feed(b)]
          const tally = (events: typeof fa.events) => events.reduce<Record<string, number>>((n, e) => ({ ...n, [e.type]: (n[e.type] ?? 0) + 1 }), {})
          assert.deepInclude(tally(fa.events), {
            "member.created": 1 + 1_012,
            "contact.created": 40,
            "event.created": 4,
            "event.updated": 2,
            "event.registration.created": 3,
            "deal.created": 3,
            "deal.approved": 2,
            "sponsorship.created": 2,
            "placement.created": 2,
            "booking.created": 3
          })
          assert.deepStrictEqual(fa.events, fb.events)
          assert.deepStrictEqual(fa.positions, fa.events.map((_, i) => i + 1))
          assert.deepStrictEqual(fa.positions, fb.positions)
          assert.deepStrictEqual(fa.deliveries, fb.deliveries)
          // A deal's deal.approved waits behind its deal.created, as an event's event.updated behind its event.created.
          assert.include(fa.deliveries, "deal.created deals/ followed")
          assert.include(fa.deliveries, "deal.approved deals/ held")
          assert.include(fa.deliveries, "event.updated events/ held")
          // Written set-wise: a collection's batch is one statement in one savepoint, so its rows share
          // the savepoint's transaction id; through the services, each record has its own savepoint.
          const sql = yield* SqlClient.SqlClient
          const writes = (tenant: number) =>
            Effect.forEach(["members", "contacts", "events", "registrations", "deals", "sponsorships", "bookings", "invoices"], (table) =>
              sql<{ readonly n: number }>`SELECT count(DISTINCT xmin::text)::int AS n FROM ${sql.literal(table)} WHERE tenant_id = ${tenant}`.pipe(
                Effect.map(([row]) => `${table} ${row!.n}`)
              ))
          // Members: Acme before the import, then a statement a batch; sponsorships and placements share a table; the invoice one by one.
          assert.deepStrictEqual(yield* writes(a), [`members ${1 + (yield* batchesOf(document().members.length))}`, "contacts 1", "events 1", "registrations 1", "deals 1", "sponsorships 2", "bookings 1", "invoices 1"])
          assert.deepStrictEqual(yield* writes(b), ["members 1013", "contacts 40", "events 4", "registrations 3", "deals 3", "sponsorships 4", "bookings 3", "invoices 1"])
          const members = fa.events.filter((e) => e.type === "member.created").map((e) => (e.data as { attributes: { slug: string } }).attributes.slug)
          assert.deepStrictEqual(members.slice(0, 5), ["acme-2", "acme", "member-1", "member-2", "acme-3"])
          assert.include(members, "acme-9999")
          assert.include(members, "elan-cafe")
        }), 300_000)

      it.effect("invoices and payments: the same events, rows, numbers and balances, each batch one statement", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const importer = yield* Importer
          // Each chamber has issued INV-000001 before the import.
          const billed = (name: string) =>
            Effect.gen(function*() {
              const tenant = yield* chamber(name)
              const [acme] = yield* sql<{ readonly id: string }>`SELECT id::text FROM members WHERE tenant_id = ${tenant}`
              const invoices = yield* Invoices
              const before = yield* invoices.create(tenant, { member_id: Number(acme!.id), lines: [{ description: "Dues", unit: 1000, quantity: 1 }] })
              yield* invoices.issue(tenant, before.id)
              return tenant
            }).pipe(Effect.orDie)
          const [a, b] = [yield* billed(`Batched ${Math.random()}`), yield* billed(`Services ${Math.random()}`)]
          const doc = billing()
          const batched = yield* importer.run(a, doc)
          const services = yield* importer.run(b, doc, { batched: false })
          assert.deepStrictEqual(batched.counts, services.counts)
          assert.deepStrictEqual([batched.counts.invoices, batched.counts.payments], [1_012, 1_006])

          const [fa, fb] = [yield* feed(a), yield* feed(b)]
          assert.deepStrictEqual(fa.events, fb.events)
          assert.deepStrictEqual(fa.positions, fb.positions)
          assert.deepStrictEqual(fa.deliveries, fb.deliveries)
          const tally = fa.events.reduce<Record<string, number>>((n, e) => ({ ...n, [e.type]: (n[e.type] ?? 0) + 1 }), {})
          // Issued: 10 of the first 12 and 750 of the bulk; updated: each issued, each ended (4) and each payment; paid: zero, paid and 250 of the bulk.
          assert.deepInclude(tally, { "invoice.created": 1 + 1_012, "invoice.issued": 1 + 760, "invoice.updated": 1 + 760 + 4 + 1_006, "invoice.paid": 2 + 250, "payment.created": 1_006 })
          // A payment's invoice.updated waits behind the invoice's earlier events.
          assert.include(fa.deliveries, "invoice.updated invoices/ held")

          const rows = (tenant: number) =>
            Effect.gen(function*() {
              const invoices = yield* sql<Record<string, unknown>>`
                SELECT number, status, currency, subtotal_cents::int, total_cents::int, amount_paid_cents::int, balance_cents::int, memo,
                  issued_at IS NOT NULL AS issued, due_on IS NOT NULL AS due, voided_at IS NOT NULL AS voided, pay_token IS NOT NULL AS token,
                  (SELECT json_agg(json_build_array(l.position, l.description, l.unit_cents, l.quantity) ORDER BY l.position)
                   FROM invoice_lines l WHERE l.invoice_id = i.id AND l.tenant_id = i.tenant_id) AS lines
                FROM invoices i WHERE tenant_id = ${tenant} ORDER BY id`
              const payments = yield* sql<Record<string, unknown>>`
                SELECT i.number, i.memo, p.method, p.gateway, p.amount_cents::int, p.received_on::text, p.reference, p.notes, p.member_id = i.member_id AS member
                FROM payments p JOIN invoices i ON i.id = p.invoice_id WHERE p.tenant_id = ${tenant} ORDER BY p.id`
              const [sequence] = yield* sql<{ readonly last_number: string }>`SELECT last_number::text FROM invoice_sequences WHERE tenant_id = ${tenant}`
              const [tokens] = yield* sql<{ readonly n: number }>`SELECT count(DISTINCT pay_token)::int AS n FROM invoices WHERE tenant_id = ${tenant}`
              const [writes] = yield* sql<{ readonly invoices: number; readonly payments: number }>`SELECT
                (SELECT count(DISTINCT xmin::text)::int FROM invoices WHERE tenant_id = ${tenant} AND status = 'draft') AS invoices,
                (SELECT count(DISTINCT xmin::text)::int FROM payments WHERE tenant_id = ${tenant}) AS payments`
              return { invoices, payments, sequence: sequence!.last_number, tokens: tokens!.n, writes: writes! }
            })
          const [ra, rb] = [yield* rows(a), yield* rows(b)]
          assert.deepStrictEqual(ra.invoices, rb.invoices)
          assert.deepStrictEqual(ra.payments, rb.payments)
          assert.deepStrictEqual([ra.sequence, ra.tokens], [rb.sequence, rb.tokens])
          assert.deepStrictEqual(ra.tokens, 1 + 1_012)
          // The chamber's INV-000001, then the import's twelve, as the services number and bring them.
          assert.deepStrictEqual(ra.invoices.slice(0, 13).map((i) => `${i.number} ${i.status} ${i.amount_paid_cents}/${i.total_cents}`), [
            "INV-000001 open 0/1000",
            "null draft 0/15100",
            "INV-000002 open 10000/30000",
            "INV-000050 open 0/5000",
            "LEGACY-7 open 0/8000",
            "INV-000051 open 0/8000",
            "INV-000052 open 0/8000",
            "INV-000053 paid 0/0",
            "INV-000054 paid 24000/24000",
            "null void 0/1000",
            "OLD-1 void 0/1000",
            "OLD-2 void 20000/20000",
            "INV-000055 uncollectible 3000/9000"
          ])
          assert.deepStrictEqual(ra.sequence, String(55 + 750))
          // Set-wise: the drafts of each invoice batch one statement (a draft in every batch); the payments of each batch one.
          assert.deepStrictEqual(ra.writes, { invoices: yield* batchesOf(billing().invoices.length), payments: yield* batchesOf(billing().payments.length) })
          assert.deepStrictEqual(rb.writes, { invoices: 1 + 250, payments: 1_006 })
        }), 300_000)

      it.effect("what no event shows is made alike too: a member imported without a slug, contacts imported subscribed, each batch still one statement", () =>
        Effect.gen(function*() {
          const doc = {
            members: [{ name: "Delta", status: "active" }, { name: "No Slug Inc", slug: "", status: "active" }, { name: "Beta", status: "active" }],
            contacts: [true, false, true, false].map((subscribed, i) => ({ first_name: "Ann", last_name: `Lee ${i}`, ...(subscribed ? { subscribed } : {}) }))
          }
          const { a, b, batched, services } = yield* importBoth(doc)
          assert.isTrue(Exit.isSuccess(batched) && Exit.isSuccess(services))
          assert.deepStrictEqual((yield* feed(a)).events, (yield* feed(b)).events)
          const sql = yield* SqlClient.SqlClient
          // The chamber's Acme, made before the import, left out.
          const made = (tenant: number) =>
            sql<{ readonly slugs: ReadonlyArray<string | null>; readonly subscribed: ReadonlyArray<boolean>; readonly statements: number }>`SELECT
              (SELECT array_agg(slug ORDER BY id) FROM members WHERE tenant_id = ${tenant} AND name <> 'Acme') AS slugs,
              (SELECT array_agg(subscribed_at IS NOT NULL ORDER BY id) FROM contacts WHERE tenant_id = ${tenant}) AS subscribed,
              (SELECT count(DISTINCT xmin::text)::int FROM members WHERE tenant_id = ${tenant} AND name <> 'Acme') AS statements`
          assert.deepStrictEqual(yield* made(a), [{ slugs: ["delta", null, "beta"], subscribed: [true, false, true, false], statements: 1 }])
          assert.deepStrictEqual((yield* made(b)).map(({ statements: _, ...rest }) => rest), [{ slugs: ["delta", null, "beta"], subscribed: [true, false, true, false] }])
        }), 300_000)

      it.effect("refuse what the services refuse, with the same problems; with --skip-invalid write the same others", () =>
        Effect.gen(function*() {
          const doc = { ...document(), members: [...document().members, { ref: "bad", name: "Taken", slug: "acme-2", status: "active" }] }
          const whole = yield* importBoth(doc)
          assert.isTrue(Exit.isFailure(whole.batched))
          assert.deepStrictEqual(JSON.stringify(whole.batched), JSON.stringify(whole.services))
          assert.deepStrictEqual((yield* feed(whole.a)).events.length, 1)

          const doc2 = {
            ...doc,
            contacts: [...doc.contacts, { first_name: "Bo", last_name: "Kim", member_ref: "bad" }],
            // Rows named by id that are no rows of the chamber's: the services refuse each, so the batch is refused.
            sponsorships: [...doc.sponsorships, { name: "Ghost", member_id: 2 ** 40 }],
            bookings: [...doc.bookings, { booking_type_id: 2 ** 40, starts_at: "2027-01-05T09:00:00Z" }],
            // Paid at once (it totals nothing), so it cannot be marked uncollectible; a draft voided takes no payment.
            invoices: [
              ...doc.invoices,
              { ref: "free", member_ref: "m1", lines: [{ description: "Free", unit: "0.00" }], status: "uncollectible" },
              { ref: "gone", member_ref: "m1", lines: [{ description: "Dues", unit: "5.00" }], status: "void" }
            ],
            payments: [
              ...doc.payments,
              { invoice_ref: "i1", method: "cash", amount: "999.00" },
              { invoice_ref: "i1", method: "refund", amount: "1.00" },
              { invoice_ref: "gone", method: "cash", amount: "1.00" },
              { invoice_id: 2 ** 40, method: "cash", amount: "1.00" },
              { invoice_ref: "i1", method: "cash", amount: "200.00", gateway: "" }
            ]
          }
          const some = yield* importBoth(doc2, { skipInvalid: true })
          assert.isTrue(Exit.isSuccess(some.batched) && Exit.isSuccess(some.services))
          if (Exit.isSuccess(some.batched) && Exit.isSuccess(some.services)) {
            assert.deepStrictEqual(some.batched.value.rejected, some.services.value.rejected)
            assert.deepStrictEqual(some.batched.value.counts, some.services.value.counts)
            assert.deepStrictEqual(some.batched.value.rejected.map((r) => `${r.collection}[${r.index}] ${r.problems.map((p) => p.message).join(" ")}`), [
              "members[1012] The slug has already been taken.",
              "contacts[40] The member ref \"bad\" names members[1012], which could not be written.",
              "invoices[1] This invoice is paid; only an open invoice can be marked uncollectible.",
              "payments[1] The payment of 999.00 USD is more than the invoice's outstanding balance of 200.00 USD (balance_cents: 20000).",
              "payments[2] A refund cannot be recorded as a payment; use card, check, cash, ach, comp or other.",
              "payments[3] This invoice is void; only an open invoice can take a payment.",
              `payments[4] No invoice ${2 ** 40} in this chamber.`,
              "payments[5] The gateway field is required.",
              "sponsorships[2] The selected member id is invalid.",
              "bookings[3] The selected booking type id is invalid."
            ])
          }
          assert.deepStrictEqual((yield* feed(some.a)).events, (yield* feed(some.b)).events)
        }), 300_000)

      it.effect("10,000 members and 2,000 contacts: an event each in the feed and a delivery each queued for the subscription", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const tenant = yield* chamber(`Large ${Math.random()}`)
          const result = yield* (yield* Importer).run(tenant, {
            members: Array.from({ length: 10_000 }, (_, i) => ({ ref: `m${i}`, name: `Member ${i}`, status: "active" })),
            contacts: Array.from({ length: 2_000 }, (_, i) => ({ first_name: "Ann", last_name: `Lee ${i}`, member_ref: `m${i}` }))
          })
          assert.deepStrictEqual([result.counts.members, result.counts.contacts], [10_000, 2_000])
          const counts = yield* sql<{ readonly type: string; readonly events: number; readonly deliveries: number }>`
            SELECT e.type, count(DISTINCT e.id)::int AS events, count(d.id)::int AS deliveries
            FROM outbox_events e LEFT JOIN webhook_deliveries d ON d.event_id = e.id AND d.status = 'pending'
            WHERE e.tenant_id = ${tenant} GROUP BY 1 ORDER BY 1`
          assert.deepStrictEqual(counts.map((c) => [c.type, c.events, c.deliveries]), [["contact.created", 2_000, 2_000], ["member.created", 10_001, 10_001]])
        }), 300_000)

      it.effect("a chamber being deleted is refused, and nothing is written", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const tenant = yield* chamber(`Leaving ${Math.random()}`)
          yield* sql`UPDATE tenants SET deleting_at = now() WHERE id = ${tenant}`
          const error = yield* Effect.flip((yield* Importer).run(tenant, { members: [{ name: "Late", status: "active" }] }))
          assert.match(error.message, /is being deleted: run chamber tenant delete again to finish/)
          assert.strictEqual((yield* feed(tenant)).events.length, 1)
        }))
    })
  })
}
