/**
 * GET /api/v1/bookings over HTTP (docs/api.md "Bookings"), on every storage runtime: only
 * confirmed, upcoming bookings of the key's chamber, soonest first and the other sorts, the
 * booking type's current name, never a visitor detail or the cancel token though the rows are
 * made through the core library with all of them, and `bookings:read` outside the `read`
 * shorthand. Access and paging errors are checked by contract.test.ts.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"
import { type BookingCreate, BookingResource, Bookings, Contacts, Members } from "@chamber/core"
import { runtimes } from "@chamber/pg-adapter/testing"
import { anotherKey, call, chamberWithKey, serverOn } from "./fixture.ts"
import { assertShowsOnly, type FeedRow, getRaw, hoursFromNow } from "./feeds.ts"

const PATH = "/api/v1/bookings"

const chamber = Effect.map(chamberWithKey("bookings:read"), (c) => ({ ...c, tenantId: c.tenant.id }))

const book = (tenantId: number, input: BookingCreate) =>
  Effect.gen(function*() {
    return yield* (yield* Bookings).create(tenantId, input)
  }).pipe(Effect.orDie)

/** The ids listed, in order. */
const ids = (key: string, query = "") =>
  call("GET", `${PATH}${query}`, { key }).pipe(Effect.map((r) => {
    assert.strictEqual(r.status, 200, JSON.stringify(r.body))
    return r.body.data.map((b: FeedRow) => b.id) as Array<number>
  }))

for (const rt of runtimes()) {
  describe(`bookings over HTTP on ${rt.name}`, () => {
    layer(serverOn(rt), { timeout: 120_000 })((it) => {
      it.effect("only confirmed bookings of the key's chamber that start now or later; cancelled, past and undated ones are left out", () =>
        Effect.gen(function*() {
          const a = yield* chamber
          const b = yield* chamber
          const tomorrow = yield* book(a.tenantId, { booking_type_name: "Room A", starts_at: hoursFromNow(24) })
          const soon = yield* book(a.tenantId, { booking_type_name: "Room A", starts_at: hoursFromNow(1), ends_at: hoursFromNow(2) })
          for (const input of [
            { booking_type_name: "Room A", starts_at: hoursFromNow(3), status: "cancelled" },
            { booking_type_name: "Room A", starts_at: hoursFromNow(-1) },
            { booking_type_name: "Room A", starts_at: hoursFromNow(-48), status: "cancelled" },
            { booking_type_name: "Room A" }
          ] as const) yield* book(a.tenantId, input)
          const theirs = yield* book(b.tenantId, { booking_type_name: "Room A", starts_at: hoursFromNow(5) })

          const reply = yield* call("GET", PATH, { key: a.key })
          assert.deepStrictEqual(reply.body.data.map((x: FeedRow) => x.id), [soon.id, tomorrow.id])
          assert.deepStrictEqual(reply.body.meta, { current_page: 1, per_page: 100, total: 2, last_page: 1 })
          assert.deepStrictEqual(yield* ids(b.key), [theirs.id])
        }))

      it.effect("soonest first by default (id breaking ties); starts_at and created_at either way", () =>
        Effect.gen(function*() {
          const a = yield* chamber
          const at = [hoursFromNow(50), hoursFromNow(10), hoursFromNow(30), hoursFromNow(10)]
          const made: Array<number> = []
          for (const starts_at of at) made.push((yield* book(a.tenantId, { booking_type_name: "Desk", starts_at })).id)
          const [b1, b2, b3, b4] = made as [number, number, number, number]
          const sql = yield* SqlClient.SqlClient
          for (const [id, minute] of [[b3, 0], [b1, 1], [b4, 1], [b2, 2]] as const) {
            yield* sql`UPDATE bookings SET created_at = '2026-01-01T00:00:00Z'::timestamptz + ${minute} * interval '1 minute' WHERE id = ${id}`
          }
          const soonest = [b2, b4, b3, b1]
          assert.deepStrictEqual(yield* ids(a.key), soonest)
          assert.deepStrictEqual(yield* ids(a.key, "?sort=starts_at"), soonest)
          assert.deepStrictEqual(yield* ids(a.key, "?sort=-starts_at"), [b1, b3, b4, b2])
          assert.deepStrictEqual(yield* ids(a.key, "?sort=created_at"), [b3, b1, b4, b2])
          assert.deepStrictEqual(yield* ids(a.key, "?sort=-created_at"), [b2, b4, b1, b3])
          assert.deepStrictEqual(yield* ids(a.key, "?sort=-ends_at"), soonest)
        }))

      it.effect("the attributes as stored; booking_type_name is the type's current name", () =>
        Effect.gen(function*() {
          const a = yield* chamber
          const member = yield* (yield* Members).create(a.tenantId, { name: "Acme", status: "active" }).pipe(Effect.orDie)
          const contact = yield* (yield* Contacts).create(a.tenantId, { first_name: "Ann", last_name: "Lee" }).pipe(Effect.orDie)
          const made = yield* book(a.tenantId, {
            booking_type_name: "Board room",
            starts_at: "2099-03-01T09:00:00-05:00",
            ends_at: "2099-03-01T10:30:00-05:00",
            member_id: member.id,
            contact_id: contact.id
          })
          const sql = yield* SqlClient.SqlClient
          yield* sql`UPDATE booking_types SET name = 'Boardroom' WHERE id = ${made.attributes.booking_type_id}`
          const reply = yield* call("GET", PATH, { key: a.key })
          assert.deepStrictEqual(reply.body.data, [{
            id: made.id,
            attributes: {
              booking_type_id: made.attributes.booking_type_id,
              booking_type_name: "Boardroom",
              starts_at: "2099-03-01T14:00:00.000Z",
              ends_at: "2099-03-01T15:30:00.000Z",
              status: "confirmed",
              cancelled_at: null,
              member_id: member.id,
              contact_id: contact.id
            },
            created_at: made.created_at,
            // The type's new name is a change of what the booking shows (ruling 30).
            updated_at: reply.body.data[0].updated_at
          }])
          assert.isAbove(Date.parse(reply.body.data[0].updated_at), Date.parse(made.updated_at!))
        }))

      it.effect("never the visitor's name, email, phone, notes, location or the cancel token, as keys or values", () =>
        Effect.gen(function*() {
          const a = yield* chamber
          yield* book(a.tenantId, {
            booking_type_name: "Room A",
            starts_at: hoursFromNow(6),
            visitor_name: "Zelda Visitorname",
            visitor_email: "zelda.private@visitor.example",
            visitor_phone: "555-867-5309",
            notes: "INTERNAL-NOTE-do-not-show",
            location: "Secret Annex 7",
            cancel_token: "tok_0123456789abcdefSECRET"
          })
          const generated = yield* book(a.tenantId, { booking_type_name: "Room A", starts_at: hoursFromNow(7) })
          const sql = yield* SqlClient.SqlClient
          const [row] = yield* sql<{ readonly cancel_token: string }>`SELECT cancel_token FROM bookings WHERE id = ${generated.id}`
          const reply = yield* getRaw(PATH, a.key)
          assert.strictEqual(reply.status, 200)
          assert.strictEqual(reply.body.data.length, 2)
          assertShowsOnly(reply, BookingResource.keys, {
            names: ["visitor_name", "visitor_email", "visitor_phone", "notes", "location", "cancel_token"],
            values: ["Zelda", "zelda.private", "867-5309", "INTERNAL-NOTE", "Secret Annex", "SECRET", row!.cancel_token]
          })
        }))

      it.effect("bookings:read is opt-in: a key minted with `read` gets 403 naming it; a key given it by name reads", () =>
        Effect.gen(function*() {
          const a = yield* chamber
          const read = yield* anotherKey(a.tenantId, "read")
          const denied = yield* call("GET", PATH, { key: read })
          assert.deepStrictEqual([denied.status, denied.body], [403, { message: "This key lacks the bookings:read scope." }])
          assert.strictEqual((yield* call("GET", "/api/v1/sponsorships", { key: read })).status, 200)
          assert.strictEqual((yield* call("GET", "/api/v1/placements", { key: read })).status, 200)
          const named = yield* anotherKey(a.tenantId, "read,bookings:read")
          assert.strictEqual((yield* call("GET", PATH, { key: named })).status, 200)
        }))
    })
  })
}
