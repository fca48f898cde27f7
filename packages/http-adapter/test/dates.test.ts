/**
 * Dates and date-times of every year from 0001 to 9999 (docs/api.md "Dates and times"), over
 * HTTP on every storage runtime: written, read back by GET exactly as sent (a date-time in UTC
 * with milliseconds), and refused with a 422 on the field outside that range.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { runtimes } from "@chamber/pg-adapter/testing"
import { call, chamberWithKey, type Reply, serverOn } from "./fixture.ts"

const writer = chamberWithKey("members:read,members:write,events:read,events:write,deals:read,deals:write")

const ok = (reply: Reply, status: number, label: string) => {
  assert.strictEqual(reply.status, status, `${label}: ${JSON.stringify(reply.body)}`)
  return reply.body.data
}
const refused = (reply: Reply, field: string, label: string) => {
  assert.strictEqual(reply.status, 422, `${label}: ${JSON.stringify(reply.body)}`)
  assert.deepStrictEqual(Object.keys(reply.body.errors), [field], label)
}

/** The first day, years 0001 to 0099 (which `Date.UTC` takes for 1900 to 1999), a leap day of each era, and the last day. */
const DATES = ["0001-01-01", "0004-02-29", "0055-06-15", "0099-12-31", "0100-01-01", "0400-02-29", "0999-12-31", "1900-01-01", "2024-02-29", "9999-12-31"]
/** Not a day of any year from 0001 to 9999. */
const NOT_DATES = ["0000-01-01", "0000-12-31", "0099-02-29", "0100-02-29", "1900-02-29", "10000-01-01", "0055-13-01", "0055-04-31", "55-01-01"]

for (const rt of runtimes()) {
  describe(`dates of every year from 0001 to 9999 on ${rt.name}`, () => {
    layer(serverOn(rt), { timeout: 120_000 })((it) => {
      it.effect("member_since: each day from 0001-01-01 to 9999-12-31 is stored and read back as sent, by POST, PATCH and GET; no other is taken", () =>
        Effect.gen(function*() {
          const { key } = yield* writer
          for (const day of DATES) {
            const made = ok(yield* call("POST", "/api/v1/members", { key, body: { name: `Since ${day}`, status: "active", member_since: day } }), 201, day)
            assert.strictEqual(made.attributes.member_since, day)
            assert.strictEqual(ok(yield* call("GET", `/api/v1/members/${made.id}`, { key }), 200, day).attributes.member_since, day)
            const other = DATES[(DATES.indexOf(day) + 3) % DATES.length]!
            assert.strictEqual(ok(yield* call("PATCH", `/api/v1/members/${made.id}`, { key, body: { member_since: other } }), 200, other).attributes.member_since, other)
            assert.strictEqual(ok(yield* call("GET", `/api/v1/members/${made.id}`, { key }), 200, other).attributes.member_since, other)
          }
          for (const day of NOT_DATES) {
            refused(yield* call("POST", "/api/v1/members", { key, body: { name: `Since ${day}`, status: "active", member_since: day } }), "member_since", day)
          }
        }))

      it.effect("an event's starts_at and ends_at: moments from year 0001 to 9999 read back in UTC; an offset that leaves that range is a 422", () =>
        Effect.gen(function*() {
          const { key } = yield* writer
          const moments: ReadonlyArray<readonly [sent: string, shown: string]> = [
            ["0001-01-01T00:00:00Z", "0001-01-01T00:00:00.000Z"],
            ["0055-03-01T10:00:00+01:00", "0055-03-01T09:00:00.000Z"],
            ["0099-12-31T23:59:59.999Z", "0099-12-31T23:59:59.999Z"],
            ["0100-01-01T00:30:00+01:00", "0099-12-31T23:30:00.000Z"],
            ["9999-12-31T23:59:59.999Z", "9999-12-31T23:59:59.999Z"]
          ]
          const listed = (id: number) =>
            call("GET", "/api/v1/events", { key }).pipe(Effect.map((r) => ok(r, 200, "list").find((e: { id: number }) => e.id === id).attributes))
          for (const [sent, shown] of moments) {
            const event = ok(yield* call("POST", "/api/v1/events", { key, body: { title: `At ${sent}`, starts_at: sent } }), 201, sent)
            assert.strictEqual(event.attributes.starts_at, shown)
            assert.strictEqual((yield* listed(event.id)).starts_at, shown)
            if (shown === "0001-01-01T00:00:00.000Z") continue
            const ended = ok(yield* call("PATCH", `/api/v1/events/${event.id}`, { key, body: { starts_at: "0001-01-01T00:00:00Z", ends_at: sent } }), 200, sent)
            assert.deepStrictEqual([ended.attributes.starts_at, ended.attributes.ends_at], ["0001-01-01T00:00:00.000Z", shown])
            const read = yield* listed(event.id)
            assert.deepStrictEqual([read.starts_at, read.ends_at], ["0001-01-01T00:00:00.000Z", shown])
          }
          // Moments whose UTC time falls in year 0000 or 10000, and days that do not exist.
          for (const sent of ["0001-01-01T00:30:00+01:00", "9999-12-31T23:30:00-01:00", "0000-06-01T00:00:00Z", "0099-02-29T00:00:00Z", "10000-01-01T00:00:00Z"]) {
            refused(yield* call("POST", "/api/v1/events", { key, body: { title: `At ${sent}`, starts_at: sent } }), "starts_at", sent)
          }
        }))

      it.effect("a deal's ends_at in year 55 is refused for ending before today, not as a malformed date; one in 9999 is kept, and starts_at in year 55", () =>
        Effect.gen(function*() {
          const { key } = yield* writer
          const member = ok(yield* call("POST", "/api/v1/members", { key, body: { name: "Ancient Deals", status: "active" } }), 201, "member")
          const early = yield* call("POST", "/api/v1/deals", { key, body: { member_id: member.id, title: "Roman Sale", ends_at: "0055-06-01T00:00:00Z" } })
          assert.deepStrictEqual([early.status, early.body.errors], [422, { ends_at: ["The ends at field must be a date after today."] }])
          const deal = ok(yield* call("POST", "/api/v1/deals", {
            key,
            body: { member_id: member.id, title: "Long Sale", starts_at: "0055-06-01T00:00:00Z", ends_at: "9999-12-31T23:59:59Z" }
          }), 201, "deal")
          const read = ok(yield* call("GET", `/api/v1/deals?sort=-created_at`, { key }), 200, "list").find((d: { id: number }) => d.id === deal.id)
          assert.deepInclude(read.attributes, { starts_at: "0055-06-01T00:00:00.000Z", ends_at: "9999-12-31T23:59:59.000Z" })
        }))
    })
  })
}
