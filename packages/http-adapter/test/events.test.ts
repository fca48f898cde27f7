/**
 * Events over HTTP (docs/api.md "Events"), on every storage runtime: defaults, the statuses a
 * client may set and the ones only the service sets, ends after starts, event types, write-only
 * fields, and the default order. Access, ids and body errors are checked by contract.test.ts.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { EventRepo, Events, Outbox, Registrations } from "@chamber/core"
import { runtimes } from "@chamber/pg-adapter/testing"
import { call, chamberWithKey, serverOn } from "./fixture.ts"

const writer = chamberWithKey("events:read,events:write")
const post = (key: string, body: unknown) => call("POST", "/api/v1/events", { key, body })
const patch = (key: string, id: number, body: unknown) => call("PATCH", `/api/v1/events/${id}`, { key, body })
const ok = (reply: { status: number; body: any }, status: number) => {
  assert.strictEqual(reply.status, status, JSON.stringify(reply.body))
  return reply.body.data
}
const invalid = (reply: { status: number; body: any }) => {
  assert.strictEqual(reply.status, 422, JSON.stringify(reply.body))
  return reply.body.errors as Record<string, Array<string>>
}

for (const rt of runtimes()) {
  describe(`events over HTTP on ${rt.name}`, () => {
    layer(serverOn(rt), { timeout: 120_000 })((it) => {
      it.effect("POST: a draft by default, not public, slug from the title, times in UTC; write-only fields stored, never shown", () =>
        Effect.gen(function*() {
          const { tenant, key } = yield* writer
          const event = ok(yield* post(key, {
            title: "Spring Mixer & Awards",
            starts_at: "2027-04-01T18:00:00-07:00",
            description: "Drinks on the terrace",
            address: "1 River Rd",
            event_type: "member",
            is_featured: true
          }), 201)
          assert.deepStrictEqual(event.attributes, {
            title: "Spring Mixer & Awards",
            slug: "spring-mixer-awards",
            status: "draft",
            venue: null,
            city: null,
            state: null,
            starts_at: "2027-04-02T01:00:00.000Z",
            ends_at: null,
            capacity: null,
            is_public: false
          })
          const stored = (yield* (yield* EventRepo).findForUpdate(tenant.id, event.id))?.stored
          assert.deepInclude(stored, { description: "Drinks on the terrace", address: "1 River Rd", event_type: "member", is_featured: true })
          const published = ok(yield* post(key, { title: "Gala", starts_at: "2027-05-01T19:00:00Z", status: "published", is_public: true }), 201)
          assert.deepInclude(published.attributes, { status: "published", is_public: true })
        }))

      it.effect("POST: event_type omitted, null or unrecognised is chamber; cancelled and completed cannot be set", () =>
        Effect.gen(function*() {
          const { tenant, key } = yield* writer
          const repo = yield* EventRepo
          for (const event_type of [undefined, null, "webinar", "CHAMBER"]) {
            const event = ok(yield* post(key, { title: "Typed", starts_at: "2027-01-01T10:00:00Z", event_type }), 201)
            assert.strictEqual((yield* repo.findForUpdate(tenant.id, event.id))?.stored.event_type, "chamber", String(event_type))
          }
          for (const status of ["cancelled", "completed", "archived"]) {
            assert.deepStrictEqual(invalid(yield* post(key, { title: "X", starts_at: "2027-01-01T10:00:00Z", status })), {
              status: ["The selected status is invalid (expected one of: draft, published)."]
            })
          }
        }))

      it.effect("POST: title and starts_at required; starts_at needs its offset; ends_at after starts_at; capacity at least 1", () =>
        Effect.gen(function*() {
          const { key } = yield* writer
          assert.deepStrictEqual(Object.keys(invalid(yield* post(key, {}))).sort(), ["starts_at", "title"])
          const dateTime = ["The starts at field must be a date-time with its offset (2027-01-10T18:00:00Z)."]
          for (const starts_at of ["2027-01-01", "2027-01-01T10:00:00", "2027-02-30T10:00:00Z", "tomorrow", ""]) {
            assert.deepStrictEqual(invalid(yield* post(key, { title: "X", starts_at })), { starts_at: dateTime }, starts_at)
          }
          const after = { ends_at: ["The ends at field must be a date-time after starts at."] }
          assert.deepStrictEqual(invalid(yield* post(key, { title: "X", starts_at: "2027-01-01T10:00:00Z", ends_at: "2027-01-01T09:00:00Z" })), after)
          assert.deepStrictEqual(invalid(yield* post(key, { title: "X", starts_at: "2027-01-01T10:00:00Z", ends_at: "2027-01-01T10:00:00Z" })), after)
          assert.deepStrictEqual(invalid(yield* post(key, { title: "X", starts_at: "2027-01-01T10:00:00Z", capacity: 0 })), {
            capacity: ["The capacity field must be at least 1."]
          })
          const fine = ok(yield* post(key, { title: "X", starts_at: "2027-01-01T10:00:00Z", ends_at: "2027-01-01T12:00:00+01:00", capacity: 1 }), 201)
          assert.strictEqual(fine.attributes.ends_at, "2027-01-01T11:00:00.000Z")
        }))

      it.effect("PATCH: draft and published move freely; a cancelled or completed event keeps its status, its other fields change", () =>
        Effect.gen(function*() {
          const { tenant, key } = yield* writer
          const event = ok(yield* post(key, { title: "Moving", starts_at: "2027-03-01T10:00:00Z" }), 201)
          assert.strictEqual(ok(yield* patch(key, event.id, { status: "published" }), 200).attributes.status, "published")
          assert.strictEqual(ok(yield* patch(key, event.id, { status: "draft" }), 200).attributes.status, "draft")
          assert.deepStrictEqual(invalid(yield* patch(key, event.id, { status: "cancelled" })), {
            status: ["The selected status is invalid (expected one of: draft, published)."]
          })
          for (const final of ["cancelled", "completed"] as const) {
            const ended = yield* (yield* Events).end(tenant.id, event.id, final)
            assert.strictEqual(ended.attributes.status, final)
            const after = ok(yield* patch(key, event.id, { status: "published", venue: `Hall ${final}` }), 200)
            assert.deepInclude(after.attributes, { status: final, venue: `Hall ${final}` })
          }
        }))

      it.effect("PATCH: starts_at and event_type cannot be null; ends_at must stay after the stored starts_at", () =>
        Effect.gen(function*() {
          const { key } = yield* writer
          const event = ok(yield* post(key, { title: "Rules", starts_at: "2027-03-01T10:00:00Z", ends_at: "2027-03-01T12:00:00Z" }), 201)
          assert.deepStrictEqual(Object.keys(invalid(yield* patch(key, event.id, { starts_at: null }))), ["starts_at"])
          assert.deepStrictEqual(invalid(yield* patch(key, event.id, { event_type: null })), { event_type: ["The event type field must not be null."] })
          assert.deepStrictEqual(Object.keys(invalid(yield* patch(key, event.id, { starts_at: "2027-03-01T13:00:00Z" }))), ["ends_at"])
          const moved = ok(yield* patch(key, event.id, { starts_at: "2027-03-01T13:00:00Z", ends_at: "2027-03-01T15:00:00Z" }), 200)
          assert.deepInclude(moved.attributes, { starts_at: "2027-03-01T13:00:00.000Z", ends_at: "2027-03-01T15:00:00.000Z" })
          assert.deepStrictEqual(ok(yield* patch(key, event.id, {}), 200), moved)
        }))

      it.effect("GET: newest-starting first by default; sort by starts_at or created_at either way", () =>
        Effect.gen(function*() {
          const { key } = yield* writer
          const ids: Array<number> = []
          for (const starts_at of ["2027-02-01T10:00:00Z", "2027-01-01T10:00:00Z", "2027-03-01T10:00:00Z"]) {
            ids.push(ok(yield* post(key, { title: `E ${starts_at}`, starts_at }), 201).id)
          }
          const order = (query: string) => call("GET", `/api/v1/events${query}`, { key }).pipe(Effect.map((r) => r.body.data.map((e: any) => e.id)))
          assert.deepStrictEqual(yield* order(""), [ids[2], ids[0], ids[1]])
          assert.deepStrictEqual(yield* order("?sort=starts_at"), [ids[1], ids[0], ids[2]])
          assert.deepStrictEqual(yield* order("?sort=created_at"), ids)
          assert.deepStrictEqual(yield* order("?sort=-created_at"), [...ids].reverse())
          assert.deepStrictEqual(yield* order("?sort=title"), yield* order(""))
        }))
    })
  })
}

for (const rt of runtimes()) {
  describe(`event registrations on ${rt.name}`, () => {
    layer(serverOn(rt), { timeout: 120_000 })((it) => {
      it.effect("made by the core with event.registration.created; listed by registered_at under registrations:read; other chambers' ids refused", () =>
        Effect.gen(function*() {
          const { tenant, key } = yield* chamberWithKey("events:read,events:write,registrations:read,members:write,contacts:write")
          const event = ok(yield* post(key, { title: "Workshop", starts_at: "2027-06-01T09:00:00Z" }), 201)
          const member = ok(yield* call("POST", "/api/v1/members", { key, body: { name: "Reg Co", status: "active" } }), 201)
          const contact = ok(yield* call("POST", "/api/v1/contacts", { key, body: { first_name: "Reg", last_name: "Istrant" } }), 201)
          const registrations = yield* Registrations
          const late = yield* registrations.create(tenant.id, event.id, { first_name: "Late", registered_at: "2026-12-02T10:00:00Z" })
          const early = yield* registrations.create(tenant.id, event.id, {
            member_id: member.id,
            contact_id: contact.id,
            status: "waitlisted",
            price_cents: 3_000_000_000,
            guest_count: 2,
            registered_at: "2026-12-01T10:00:00Z"
          })
          assert.deepStrictEqual(early.attributes, {
            event_id: event.id,
            member_id: member.id,
            contact_id: contact.id,
            first_name: null,
            last_name: null,
            email: null,
            status: "waitlisted",
            source: null,
            price_cents: 3_000_000_000,
            guest_count: 2,
            registered_at: "2026-12-01T10:00:00.000Z",
            checked_in_at: null
          })
          const listed = yield* call("GET", `/api/v1/events/${event.id}/registrations`, { key })
          assert.deepStrictEqual(listed.body, { data: [early, late], meta: { current_page: 1, per_page: 100, total: 2, last_page: 1 } })
          const events = yield* (yield* Outbox).list(tenant.id, { type: "event.registration.created" })
          assert.deepStrictEqual(events.map((e) => e.data), [late, early])

          const other = yield* chamberWithKey("members:write,events:write,registrations:read")
          const theirs = ok(yield* call("POST", "/api/v1/members", { key: other.key, body: { name: "Theirs", status: "active" } }), 201)
          const refused = yield* registrations.create(tenant.id, event.id, { member_id: theirs.id }).pipe(Effect.flip)
          assert.deepStrictEqual([refused._tag, refused.message], ["InvalidInput", "The selected member id is invalid."])
          assert.strictEqual((yield* call("GET", `/api/v1/events/${event.id}/registrations`, { key: other.key })).status, 404)
          assert.strictEqual((yield* (yield* Outbox).list(tenant.id, { type: "event.registration.created" })).length, 2)
        }))
    })
  })
}
