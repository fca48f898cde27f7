/**
 * `updated_at` moves with every change of a row, derived ones included (ruling 30), as an
 * integrator syncing with `updated_since` sees it, on every storage runtime: a payment changes
 * its invoice's balance and status, a member's new name the `member_name` of its sponsorships, a
 * custom field made visible the `custom_fields` of the rows holding a value, a booking type's new
 * name the `booking_type_name` of its bookings; status transitions
 * and an unsubscribe move the row they change, and a PATCH that changes nothing moves nothing.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"
import { Bookings, Contacts, Events, Invoices, Members, Sponsorships, Tenants } from "@chamber/core"
import { runtimes } from "@chamber/pg-adapter/testing"
import { call, chamberWithKey, serverOn } from "./fixture.ts"

type Json = Record<string, any>

/**
 * A moment after every write so far: the next millisecond once the clock has passed it. A row
 * changed from now on has `updated_at` at or after it; one untouched since, before it.
 */
const mark = Effect.promise(async () => {
  const at = new Date(Date.now() + 1)
  while (Date.now() <= at.getTime()) await new Promise((resolve) => setTimeout(resolve, 1))
  return at.toISOString()
})

for (const rt of runtimes()) {
  describe(`updated_at moves with derived changes, on ${rt.name}`, () => {
    layer(serverOn(rt), { timeout: 120_000 })((it) => {
      const changedSince = (key: string, list: string, since: string) =>
        Effect.map(call("GET", `${list}${list.includes("?") ? "&" : "?"}updated_since=${since}&sort=updated_at`, { key }), (reply) => {
          assert.strictEqual(reply.status, 200, JSON.stringify(reply.body))
          for (const row of reply.body.data) assert.isAtLeast(Date.parse(row.updated_at), Date.parse(since), `${list}: ${row.id}`)
          return reply.body.data as Array<Json>
        })

      it.effect("an invoice after a payment: its balance, then its status paid, each move its updated_at", () =>
        Effect.gen(function*() {
          const { key, tenant } = yield* chamberWithKey("all")
          const member = yield* (yield* Members).create(tenant.id, { name: "Acme", status: "active" })
          const other = yield* (yield* Invoices).create(tenant.id, { member_id: member.id, lines: [{ description: "Gala", unit: 5_000, quantity: 1 }] })
          const created = yield* call("POST", "/api/v1/invoices", { key, body: { member_id: member.id, lines: [{ description: "Dues", unit: "100.00", quantity: 1 }] } })
          const id: number = created.body.data.id
          assert.strictEqual((yield* call("POST", `/api/v1/invoices/${id}/issue`, { key })).status, 200)

          const beforePayment = yield* mark
          assert.deepStrictEqual(yield* changedSince(key, "/api/v1/invoices", beforePayment), [])
          assert.strictEqual((yield* call("POST", `/api/v1/invoices/${id}/payments`, { key, body: { method: "check", amount: "40.00" } })).status, 201)
          const partly = yield* changedSince(key, "/api/v1/invoices", beforePayment)
          assert.deepStrictEqual(partly.map((i) => [i.id, i.attributes.status, i.attributes.balance_cents]), [[id, "open", 6_000]])
          assert.strictEqual((yield* changedSince(key, "/api/v1/payments", beforePayment)).length, 1)

          const beforeLast = yield* mark
          assert.strictEqual((yield* call("POST", `/api/v1/invoices/${id}/payments`, { key, body: { method: "card", amount: "60.00" } })).status, 201)
          const paid = yield* changedSince(key, "/api/v1/invoices?status=paid", beforeLast)
          assert.deepStrictEqual(paid.map((i) => [i.id, i.attributes.status, i.attributes.balance_cents]), [[id, "paid", 0]])
          assert.isAbove(Date.parse(paid[0]!.updated_at), Date.parse(partly[0]!.updated_at))
          // The other invoice of the member did not change.
          assert.notInclude((yield* changedSince(key, "/api/v1/invoices", beforePayment)).map((i) => i.id), other.id)
        }), 120_000)

      it.effect("issue and void: each status transition moves the invoice's updated_at", () =>
        Effect.gen(function*() {
          const { key, tenant } = yield* chamberWithKey("all")
          const member = yield* (yield* Members).create(tenant.id, { name: "Acme", status: "active" })
          const invoices = yield* Invoices
          const draft = yield* invoices.create(tenant.id, { member_id: member.id, lines: [{ description: "Dues", unit: 10_000, quantity: 1 }] })
          yield* invoices.create(tenant.id, { member_id: member.id, lines: [{ description: "Gala", unit: 5_000, quantity: 1 }] })
          const beforeIssue = yield* mark
          yield* invoices.issue(tenant.id, draft.id)
          assert.deepStrictEqual((yield* changedSince(key, "/api/v1/invoices", beforeIssue)).map((i) => i.attributes.status), ["open"])
          const beforeVoid = yield* mark
          yield* invoices.void(tenant.id, draft.id)
          assert.deepStrictEqual((yield* changedSince(key, "/api/v1/invoices", beforeVoid)).map((i) => i.attributes.status), ["void"])
        }), 120_000)

      it.effect("a member's new name moves the updated_at of its sponsorships, which show it as member_name", () =>
        Effect.gen(function*() {
          const { key, tenant } = yield* chamberWithKey("all")
          const members = yield* Members
          const acme = yield* members.create(tenant.id, { name: "Acme", status: "active" })
          const bolt = yield* members.create(tenant.id, { name: "Bolt", status: "active" })
          const sponsorships = yield* Sponsorships
          const gold = yield* sponsorships.create(tenant.id, { name: "Gold", status: "active", kind: "tier", member_id: acme.id })
          yield* sponsorships.create(tenant.id, { name: "Silver", status: "active", kind: "tier", member_id: bolt.id })

          const before = yield* mark
          const renamed = yield* call("PATCH", `/api/v1/members/${acme.id}`, { key, body: { name: "Acme Tools" } })
          assert.strictEqual(renamed.status, 200, JSON.stringify(renamed.body))
          const changed = yield* changedSince(key, "/api/v1/sponsorships", before)
          assert.deepStrictEqual(changed.map((s) => [s.id, s.attributes.member_name]), [[gold.id, "Acme Tools"]])
          assert.deepStrictEqual((yield* changedSince(key, "/api/v1/members", before)).map((m) => m.id), [acme.id])
        }), 120_000)

      it.effect("a booking type's new name moves the updated_at of its bookings, which show it as booking_type_name", () =>
        Effect.gen(function*() {
          const { key, tenant } = yield* chamberWithKey("all")
          const bookings = yield* Bookings
          const tomorrow = new Date(Date.now() + 86_400_000).toISOString()
          const room = yield* bookings.create(tenant.id, { booking_type_name: "Room A", starts_at: tomorrow })
          yield* bookings.create(tenant.id, { booking_type_name: "Room B", starts_at: tomorrow })
          const before = yield* mark
          // Booking types are named by whoever runs the database (no endpoint renames one).
          const sql = yield* SqlClient.SqlClient
          yield* sql`UPDATE booking_types SET name = 'Board Room' WHERE tenant_id = ${tenant.id} AND id = ${room.attributes.booking_type_id}`.pipe(Effect.orDie)
          const changed = yield* changedSince(key, "/api/v1/bookings", before)
          assert.deepStrictEqual(changed.map((b) => [b.id, b.attributes.booking_type_name]), [[room.id, "Board Room"]])
        }), 120_000)

      it.effect("a custom field made visible moves the updated_at of the members holding a value for it; a hidden one moves none", () =>
        Effect.gen(function*() {
          const { key, tenant } = yield* chamberWithKey("all")
          const members = yield* Members
          const gold = yield* members.create(tenant.id, { name: "Acme", status: "active", custom_fields: { tier: "Gold", internal: "x" } })
          yield* members.create(tenant.id, { name: "Bolt", status: "active" })
          const tenants = yield* Tenants

          const beforeHidden = yield* mark
          yield* tenants.addField(tenant.id, { resource: "member", key: "internal", label: "Internal", api_visible: false })
          assert.deepStrictEqual(yield* changedSince(key, "/api/v1/members", beforeHidden), [])

          const beforeVisible = yield* mark
          yield* tenants.addField(tenant.id, { resource: "member", key: "tier", label: "Tier", api_visible: true })
          yield* tenants.addField(tenant.id, { resource: "contact", key: "tier", label: "Tier", api_visible: true })
          const changed = yield* changedSince(key, "/api/v1/members", beforeVisible)
          assert.deepStrictEqual(changed.map((m) => [m.id, m.attributes.custom_fields]), [[gold.id, { tier: "Gold" }]])
        }), 120_000)

      it.effect("an event ended and a contact unsubscribed move their updated_at; a PATCH that changes nothing moves nothing", () =>
        Effect.gen(function*() {
          const { key, tenant } = yield* chamberWithKey("all")
          const event = yield* (yield* Events).create(tenant.id, { title: "Gala", starts_at: "2027-01-10T18:00:00.000Z", status: "published" })
          const contacts = yield* Contacts
          const subscribed = yield* contacts.subscribe(tenant.id, { email: "ann.lee@acme.example" })
          const member = yield* (yield* Members).create(tenant.id, { name: "Acme", status: "active" })

          const before = yield* mark
          yield* (yield* Events).end(tenant.id, event.id, "cancelled")
          yield* contacts.unsubscribe(tenant.id, subscribed.contact.id)
          const same = yield* call("PATCH", `/api/v1/members/${member.id}`, { key, body: { name: "Acme", status: "active" } })
          assert.strictEqual(same.status, 200, JSON.stringify(same.body))
          assert.deepStrictEqual((yield* changedSince(key, "/api/v1/events", before)).map((e) => [e.id, e.attributes.status]), [[event.id, "cancelled"]])
          assert.deepStrictEqual((yield* changedSince(key, "/api/v1/contacts", before)).map((c) => c.id), [subscribed.contact.id])
          assert.deepStrictEqual(yield* changedSince(key, "/api/v1/members", before), [])
        }), 120_000)
    })
  })
}
