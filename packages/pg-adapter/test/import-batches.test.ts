/**
 * The import's set-wise writes (core ImportBatchWrites.ts, ImportBatchesSql.ts) on every storage
 * runtime: one document imported set-wise into one chamber and through the services one record at
 * a time into another gives the same change feed (kinds, bodies but for ids and times, positions)
 * and the same deliveries, and the same refusals; 10,000 members and contacts give one event each
 * and a delivery each to a subscription; a chamber being deleted is refused.
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

/** Members past one set-wise batch (the importer writes 1,000 at a time), so the second batch follows written ones. */
const document = () => ({
  members: [
    ...Array.from({ length: 1_010 }, (_, i) => ({ ref: `m${i}`, name: i % 3 === 0 ? "Acme" : `Member ${i % 400}`, status: "active", custom_fields: { tier: "gold", hidden: i } })),
    { ref: "x1", name: "Acme", slug: "acme-9999", status: "pending" },
    { ref: "x2", name: "Élan Café", status: "active", email: "elan@example.com", phone: "555-0100" }
  ],
  contacts: Array.from({ length: 40 }, (_, i) => ({ ref: `c${i}`, first_name: "Ann", last_name: `Lee ${i}`, ...(i % 2 === 0 ? { member_ref: `m${i}` } : {}) })),
  events: [{ ref: "e1", title: "Gala", starts_at: "2027-01-10T18:00:00Z", status: "published" }],
  registrations: [{ event_ref: "e1", member_ref: "m1", contact_ref: "c1", status: "registered" }]
})

const chamber = (name: string) =>
  Effect.gen(function*() {
    const tenants = yield* Tenants
    const tenant = yield* tenants.create({ name })
    yield* tenants.addField(tenant.id, { resource: "member", key: "tier", label: "Tier", api_visible: true })
    yield* tenants.addField(tenant.id, { resource: "member", key: "hidden", label: "Hidden", api_visible: false })
    yield* (yield* Hooks).create(tenant.id, { url: "https://hooks.example.com/in", events: ["member.created", "contact.created", "event.registration.created"] })
    // Taken before the import: generated slugs go past it, an explicit one naming it is refused.
    yield* (yield* Members).create(tenant.id, { name: "Acme", slug: "acme-2", status: "active" })
    return tenant.id
  }).pipe(Effect.orDie)

const feed = (tenantId: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const events = yield* (yield* Outbox).list(tenantId)
    const positions = yield* sql<{ readonly position: string }>`SELECT position::text FROM outbox_events WHERE tenant_id = ${tenantId} ORDER BY id`
    const deliveries = yield* sql<{ readonly type: string; readonly resource: string; readonly held: boolean }>`
      SELECT e.type, d.resource, d.held FROM webhook_deliveries d JOIN outbox_events e ON e.id = d.event_id
      WHERE d.tenant_id = ${tenantId} ORDER BY d.id`
    return {
      events: events.map((e) => ({ type: e.type, data: shape(e.data) })),
      positions: positions.map((p) => Number(p.position)),
      deliveries: deliveries.map((d) => `${d.type} ${d.resource.replace(/\d+$/, "")} ${d.held}`)
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
          // Acme, the members, the contacts, the event (event.created, ruling 34) and its registration.
          assert.strictEqual(fa.events.length, 1 + 1_012 + 40 + 1 + 1)
          assert.deepStrictEqual(fa.events, fb.events)
          assert.deepStrictEqual(fa.positions, fa.events.map((_, i) => i + 1))
          assert.deepStrictEqual(fa.positions, fb.positions)
          assert.deepStrictEqual(fa.deliveries, fb.deliveries)
          const members = fa.events.filter((e) => e.type === "member.created").map((e) => (e.data as { attributes: { slug: string } }).attributes.slug)
          assert.deepStrictEqual(members.slice(0, 5), ["acme-2", "acme", "member-1", "member-2", "acme-3"])
          assert.include(members, "acme-9999")
          assert.include(members, "elan-cafe")
        }), 300_000)

      it.effect("refuse what the services refuse, with the same problems; with --skip-invalid write the same others", () =>
        Effect.gen(function*() {
          const doc = { ...document(), members: [...document().members, { ref: "bad", name: "Taken", slug: "acme-2", status: "active" }] }
          const whole = yield* importBoth(doc)
          assert.isTrue(Exit.isFailure(whole.batched))
          assert.deepStrictEqual(JSON.stringify(whole.batched), JSON.stringify(whole.services))
          assert.deepStrictEqual((yield* feed(whole.a)).events.length, 1)

          const doc2 = { ...doc, contacts: [...doc.contacts, { first_name: "Bo", last_name: "Kim", member_ref: "bad" }] }
          const some = yield* importBoth(doc2, { skipInvalid: true })
          assert.isTrue(Exit.isSuccess(some.batched) && Exit.isSuccess(some.services))
          if (Exit.isSuccess(some.batched) && Exit.isSuccess(some.services)) {
            assert.deepStrictEqual(some.batched.value.rejected, some.services.value.rejected)
            assert.deepStrictEqual(some.batched.value.counts, some.services.value.counts)
            assert.strictEqual(some.batched.value.rejected.length, 2)
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
