/**
 * The feeds' core operations and storage (docs/api.md "Sponsorships", "Placements", "Bookings"),
 * on embedded PGlite and on PostgreSQL: `create` checks its input and the tenant of every
 * reference, stores the internal fields, and the live rules hold at their boundaries on a given
 * day. The HTTP suites check the feeds over the wire.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"
import {
  BookingRepo,
  Bookings,
  Contacts,
  Events,
  Members,
  PlacementRepo,
  Placements,
  SponsorshipRepo,
  Sponsorships,
  Tenants
} from "@chamber/core"
import { StorageLive } from "../src/index.ts"
import { onDatabase, runtimes } from "./harness.ts"

/** A chamber with a member, a contact and an event. */
const chamber = Effect.gen(function*() {
  const tenant = yield* (yield* Tenants).create({ name: `Feeds ${Math.random()}` })
  const member = yield* (yield* Members).create(tenant.id, { name: "Acme & Sons", status: "active" })
  const contact = yield* (yield* Contacts).create(tenant.id, { first_name: "Ann", last_name: "Lee" })
  const event = yield* (yield* Events).create(tenant.id, { title: "Gala", starts_at: "2027-01-10T18:00:00Z" })
  return { tenantId: tenant.id, memberId: member.id, contactId: contact.id, eventId: event.id }
}).pipe(Effect.orDie)

const invalid = <A, R>(self: Effect.Effect<A, { readonly _tag: string; readonly errors?: unknown }, R>) =>
  self.pipe(
    Effect.flip,
    Effect.map((e) => ({ tag: e._tag, errors: e.errors }))
  )

/** The whole stored row, internal columns included. */
const stored = (table: "sponsorships" | "bookings", id: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<Record<string, unknown>>`SELECT * FROM ${sql(table)} WHERE id = ${id}`
    return rows[0]!
  }).pipe(Effect.orDie)

for (const rt of runtimes()) {
  describe(`the feeds' core operations on ${rt.name}`, () => {
    layer(onDatabase(rt, (config) => StorageLive(config)), { timeout: 120_000 })((it) => {
      it.effect("Sponsorships.create: kind tier by default; internal fields stored, never in the result; the member's name read with it", () =>
        Effect.gen(function*() {
          const a = yield* chamber
          const sponsorships = yield* Sponsorships
          const made = yield* sponsorships.create(a.tenantId, {
            member_id: a.memberId,
            name: "Gold",
            status: "active",
            starts_on: "2026-01-01",
            event_id: a.eventId,
            amount_cents: 50_000,
            invoice_id: 77,
            notes: "Paid late"
          })
          assert.deepStrictEqual(made.attributes, {
            member_id: a.memberId,
            member_name: "Acme & Sons",
            name: "Gold",
            status: "active",
            starts_on: "2026-01-01",
            ends_on: null,
            sponsorship_package_id: null,
            tier: null,
            event_id: a.eventId
          })
          assert.deepInclude(yield* stored("sponsorships", made.id), { kind: "tier", amount_cents: 50_000n, invoice_id: 77n, notes: "Paid late" })
          const wall = yield* sponsorships.create(a.tenantId, { kind: "logo_wall" })
          assert.deepStrictEqual([wall.attributes.status, wall.attributes.member_name], ["pending", null])
          assert.strictEqual((yield* stored("sponsorships", wall.id)).kind, "logo_wall")
        }))

      it.effect("Sponsorships.create: bad input is InvalidInput naming each field; another chamber's member or event is invalid on that field", () =>
        Effect.gen(function*() {
          const a = yield* chamber
          const b = yield* chamber
          const sponsorships = yield* Sponsorships
          assert.deepStrictEqual(yield* invalid(sponsorships.create(a.tenantId, { status: "live" as never, ends_on: "2026-13-01" })), {
            tag: "InvalidInput",
            errors: {
              status: ["The selected status is invalid (expected one of: pending, active, fulfilled, cancelled)."],
              ends_on: ["The ends on field must be a valid date (YYYY-MM-DD)."]
            }
          })
          for (const member_id of [b.memberId, 99_999_999]) {
            assert.deepStrictEqual(yield* invalid(sponsorships.create(a.tenantId, { member_id })), {
              tag: "InvalidInput",
              errors: { member_id: ["The selected member id is invalid."] }
            })
          }
          assert.deepStrictEqual(yield* invalid(sponsorships.create(a.tenantId, { event_id: b.eventId })), {
            tag: "InvalidInput",
            errors: { event_id: ["The selected event id is invalid."] }
          })
        }))

      it.effect("Placements.create: a row of kind ad; ad_kind image when there is an image, else text; counts, ctr and internal fields", () =>
        Effect.gen(function*() {
          const a = yield* chamber
          const b = yield* chamber
          const placements = yield* Placements
          const text = yield* placements.create(a.tenantId, { member_id: a.memberId, ad_headline: "Hi", impressions: 400, clicks: 9, amount_cents: 1200, notes: "n" })
          assert.deepInclude(text.attributes, { ad_kind: "text", impressions: 400, clicks: 9, ctr: 9 / 400, is_house_ad: false, status: "pending" })
          assert.deepInclude(yield* stored("sponsorships", text.id), { kind: "ad", amount_cents: 1200n, notes: "n" })
          const image = yield* placements.create(a.tenantId, { ad_image_url: "https://cdn.example/a.png" })
          assert.deepInclude(image.attributes, { ad_kind: "image", impressions: 0, clicks: 0, ctr: 0 })
          const explicit = yield* placements.create(a.tenantId, { ad_image_url: "https://cdn.example/a.png", ad_kind: "text" })
          assert.strictEqual(explicit.attributes.ad_kind, "text")
          assert.deepStrictEqual(yield* invalid(placements.create(a.tenantId, { member_id: b.memberId })), {
            tag: "InvalidInput",
            errors: { member_id: ["The selected member id is invalid."] }
          })
          assert.deepStrictEqual(yield* invalid(placements.create(a.tenantId, { impressions: -1 })), {
            tag: "InvalidInput",
            errors: { impressions: ["The impressions field must be at least 0."] }
          })
        }))

      it.effect("Bookings.create: the type by name is found or made in the chamber, by id it must be the chamber's; a random cancel token", () =>
        Effect.gen(function*() {
          const a = yield* chamber
          const b = yield* chamber
          const bookings = yield* Bookings
          const first = yield* bookings.create(a.tenantId, { booking_type_name: "Room A", starts_at: "2027-01-01T09:00:00-05:00", visitor_name: "X" })
          const second = yield* bookings.create(a.tenantId, { booking_type_name: " Room A " })
          const other = yield* bookings.create(b.tenantId, { booking_type_name: "Room A" })
          assert.strictEqual(second.attributes.booking_type_id, first.attributes.booking_type_id)
          assert.notStrictEqual(other.attributes.booking_type_id, first.attributes.booking_type_id)
          assert.deepStrictEqual(first.attributes, {
            booking_type_id: first.attributes.booking_type_id,
            booking_type_name: "Room A",
            starts_at: "2027-01-01T14:00:00.000Z",
            ends_at: null,
            status: "confirmed",
            cancelled_at: null,
            member_id: null,
            contact_id: null
          })
          const row = yield* stored("bookings", first.id)
          assert.strictEqual(row.visitor_name, "X")
          assert.match(String(row.cancel_token), /^[0-9A-Za-z]{32}$/)
          assert.notStrictEqual((yield* stored("bookings", second.id)).cancel_token, row.cancel_token)
          const byId = yield* bookings.create(a.tenantId, {
            booking_type_id: first.attributes.booking_type_id,
            member_id: a.memberId,
            contact_id: a.contactId,
            cancel_token: "given",
            status: "cancelled"
          })
          assert.deepInclude(byId.attributes, { booking_type_name: "Room A", member_id: a.memberId, contact_id: a.contactId, status: "cancelled" })
          assert.isString(byId.attributes.cancelled_at)
          assert.strictEqual((yield* stored("bookings", byId.id)).cancel_token, "given")
        }))

      it.effect("Bookings.create: another chamber's booking type, member or contact is invalid on that field; a type is required", () =>
        Effect.gen(function*() {
          const a = yield* chamber
          const b = yield* chamber
          const bookings = yield* Bookings
          const theirs = yield* bookings.create(b.tenantId, { booking_type_name: "Theirs" })
          const cases: ReadonlyArray<readonly [Record<string, unknown>, Record<string, ReadonlyArray<string>>]> = [
            [{ booking_type_id: theirs.attributes.booking_type_id }, { booking_type_id: ["The selected booking type id is invalid."] }],
            [{ booking_type_name: "Ours", member_id: b.memberId }, { member_id: ["The selected member id is invalid."] }],
            [{ booking_type_name: "Ours", contact_id: b.contactId }, { contact_id: ["The selected contact id is invalid."] }],
            [{}, { booking_type_id: ["The booking type id field is required when booking type name is not present."] }],
            [{ booking_type_name: "Ours", status: "tentative" }, { status: ["The selected status is invalid (expected one of: confirmed, cancelled)."] }]
          ]
          for (const [input, errors] of cases) {
            assert.deepStrictEqual(yield* invalid(bookings.create(a.tenantId, input)), { tag: "InvalidInput", errors }, JSON.stringify(input))
          }
          // None of the refused inputs made a booking type in this chamber.
          const sql = yield* SqlClient.SqlClient
          assert.deepStrictEqual(yield* sql`SELECT name FROM booking_types WHERE tenant_id = ${a.tenantId}`, [])
        }))

      it.effect("the live rules at their boundaries on a given day: the first and the last day count, nulls are open", () =>
        Effect.gen(function*() {
          const a = yield* chamber
          const sponsorships = yield* Sponsorships
          const placements = yield* Placements
          const day = "2030-06-15"
          const names: Record<string, readonly [string | null, string | null]> = {
            "starts today": [day, null],
            "ends today": [null, day],
            "open": [null, null],
            "starts tomorrow": ["2030-06-16", null],
            "ended yesterday": [null, "2030-06-14"]
          }
          for (const [name, [starts_on, ends_on]] of Object.entries(names)) {
            yield* sponsorships.create(a.tenantId, { name, status: "active", starts_on, ends_on })
            yield* placements.create(a.tenantId, { ad_slot: name, ad_headline: "Hi", status: "active", starts_on, ends_on })
          }
          const live = yield* (yield* SponsorshipRepo).listLive(a.tenantId, day, undefined, 1)
          // Latest-starting first, those without a start last (newest id first among them).
          assert.deepStrictEqual(live.rows.map((s) => s.attributes.name), ["starts today", "open", "ends today"])
          const ads = yield* (yield* PlacementRepo).listLive(a.tenantId, day, undefined, 1)
          assert.deepStrictEqual(ads.rows.map((p) => p.attributes.ad_slot), ["starts today", "open", "ends today"])
        }))

      it.effect("bookings: confirmed ones starting at or after the given moment", () =>
        Effect.gen(function*() {
          const a = yield* chamber
          const bookings = yield* Bookings
          const now = "2030-06-15T12:00:00.000Z"
          for (const [starts_at, status] of [
            ["2030-06-15T12:00:00Z", "confirmed"],
            ["2030-06-15T11:59:59Z", "confirmed"],
            ["2030-06-16T09:00:00Z", "cancelled"],
            [null, "confirmed"]
          ] as const) {
            yield* bookings.create(a.tenantId, { booking_type_name: "Desk", starts_at, status })
          }
          const upcoming = yield* (yield* BookingRepo).listUpcoming(a.tenantId, now, undefined, 1)
          assert.deepStrictEqual(upcoming.rows.map((b) => b.attributes.starts_at), ["2030-06-15T12:00:00.000Z"])
        }))
    })
  })
}
