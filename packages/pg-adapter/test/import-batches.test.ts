/**
 * The import's set-wise writes (core ImportBatchWrites.ts, ImportBatchesSql.ts) on every storage
 * runtime: one document of every collection imported set-wise into one chamber and through the
 * services one record at a time into another gives the same change feed (kinds, bodies but for ids
 * and times, positions) and the same deliveries, with each batched collection written by one
 * statement, and the same refusals; 10,000 members and contacts give one event each and a delivery
 * each to a subscription; a chamber being deleted is refused.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as SqlClient from "effect/sql/SqlClient"
import { Hooks, Importer, type ImportOptions, Members, Outbox, Tenants } from "@chamber/core"
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
          // Members: Acme before the import, then two batches; sponsorships and placements share a table; the invoice one by one.
          assert.deepStrictEqual(yield* writes(a), ["members 3", "contacts 1", "events 1", "registrations 1", "deals 1", "sponsorships 2", "bookings 1", "invoices 1"])
          assert.deepStrictEqual(yield* writes(b), ["members 1013", "contacts 40", "events 4", "registrations 3", "deals 3", "sponsorships 4", "bookings 3", "invoices 1"])
          const members = fa.events.filter((e) => e.type === "member.created").map((e) => (e.data as { attributes: { slug: string } }).attributes.slug)
          assert.deepStrictEqual(members.slice(0, 5), ["acme-2", "acme", "member-1", "member-2", "acme-3"])
          assert.include(members, "acme-9999")
          assert.include(members, "elan-cafe")
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
            bookings: [...doc.bookings, { booking_type_id: 2 ** 40, starts_at: "2027-01-05T09:00:00Z" }]
          }
          const some = yield* importBoth(doc2, { skipInvalid: true })
          assert.isTrue(Exit.isSuccess(some.batched) && Exit.isSuccess(some.services))
          if (Exit.isSuccess(some.batched) && Exit.isSuccess(some.services)) {
            assert.deepStrictEqual(some.batched.value.rejected, some.services.value.rejected)
            assert.deepStrictEqual(some.batched.value.counts, some.services.value.counts)
            assert.deepStrictEqual(some.batched.value.rejected.map((r) => `${r.collection}[${r.index}] ${r.problems.map((p) => p.message).join(" ")}`), [
              "members[1012] The slug has already been taken.",
              "contacts[40] The member ref \"bad\" names members[1012], which could not be written.",
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
