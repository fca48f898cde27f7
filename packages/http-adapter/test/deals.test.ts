/**
 * Hot Deals over HTTP (docs/api.md "Deals"), on every storage runtime: defaults, the chamber's own
 * member, ends after today, call-to-action addresses, write-only fields, and deal.approved exactly
 * when a deal becomes approved. Access, ids and body errors are checked by contract.test.ts.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { DealRepo, Outbox } from "@chamber/core"
import { runtimes } from "@chamber/pg-adapter/testing"
import { call, chamberWithKey, serverOn } from "./fixture.ts"

const chamber = Effect.gen(function*() {
  const c = yield* chamberWithKey("deals:read,deals:write,members:write")
  const member = yield* call("POST", "/api/v1/members", { key: c.key, body: { name: `Deal Maker ${Math.random()}`, status: "active" } })
  return { ...c, memberId: member.body.data.id as number }
})
const post = (key: string, body: unknown) => call("POST", "/api/v1/deals", { key, body })
const patch = (key: string, id: number, body: unknown) => call("PATCH", `/api/v1/deals/${id}`, { key, body })
const data = (reply: { status: number; body: any }, status: number) => {
  assert.strictEqual(reply.status, status, JSON.stringify(reply.body))
  return reply.body.data
}
const tomorrow = () => new Date(Date.now() + 86_400_000).toISOString()

for (const rt of runtimes()) {
  describe(`deals over HTTP on ${rt.name}`, () => {
    layer(serverOn(rt), { timeout: 120_000 })((it) => {
      it.effect("POST: pending, public and not featured by default; write-only fields stored, never shown; no deal.approved", () =>
        Effect.gen(function*() {
          const { tenant, key, memberId } = yield* chamber
          const deal = data(yield* post(key, {
            member_id: memberId,
            title: "Free Coffee Friday",
            description: "Show this at the counter",
            terms: "One per visit",
            cta_url: "https://coffee.example/deal"
          }), 201)
          assert.deepStrictEqual(deal.attributes, {
            member_id: memberId,
            title: "Free Coffee Friday",
            slug: "free-coffee-friday",
            discount_label: null,
            status: "pending",
            audience: "public",
            starts_at: null,
            ends_at: null,
            is_featured: false
          })
          assert.deepInclude((yield* (yield* DealRepo).findForUpdate(tenant.id, deal.id))?.stored, {
            description: "Show this at the counter",
            terms: "One per visit",
            cta_url: "https://coffee.example/deal"
          })
          assert.deepStrictEqual(yield* (yield* Outbox).list(tenant.id, { type: "deal.approved" }), [])
        }))

      it.effect("deal.approved fires when created approved, and when pending or rejected becomes approved; not again while approved", () =>
        Effect.gen(function*() {
          const { tenant, key, memberId } = yield* chamber
          const approved = data(yield* post(key, { member_id: memberId, title: "Approved", status: "approved" }), 201)
          const pending = data(yield* post(key, { member_id: memberId, title: "Pending" }), 201)
          const rejected = data(yield* post(key, { member_id: memberId, title: "Rejected", status: "rejected" }), 201)
          const nowApproved = data(yield* patch(key, pending.id, { status: "approved" }), 200)
          const alsoApproved = data(yield* patch(key, rejected.id, { status: "approved" }), 200)
          data(yield* patch(key, approved.id, { status: "approved", title: "Approved again" }), 200)
          const events = yield* (yield* Outbox).list(tenant.id, { type: "deal.approved" })
          assert.deepStrictEqual(events.map((e) => e.data), [approved, nowApproved, alsoApproved])
        }))

      it.effect("member_id must be the chamber's member (another chamber's or a missing one is a 422 on member_id); ends_at after today; cta_url http(s)", () =>
        Effect.gen(function*() {
          const { key, memberId } = yield* chamber
          const other = yield* chamber
          const unknown = { member_id: ["The selected member id is invalid."] }
          for (const member_id of [other.memberId, 99_999_999]) {
            const reply = yield* post(key, { member_id, title: "Not ours" })
            assert.deepStrictEqual([reply.status, reply.body.errors], [422, unknown], String(member_id))
          }
          const today = new Date().toISOString()
          const tooSoon = yield* post(key, { member_id: memberId, title: "Today", ends_at: today })
          assert.deepStrictEqual([tooSoon.status, tooSoon.body.errors], [422, { ends_at: ["The ends at field must be a date after today."] }])
          data(yield* post(key, { member_id: memberId, title: "Tomorrow", ends_at: tomorrow() }), 201)
          for (const cta_url of ["ftp://x.example", "coffee.example", "javascript:alert(1)"]) {
            const reply = yield* post(key, { member_id: memberId, title: "Link", cta_url })
            assert.deepStrictEqual([reply.status, reply.body.errors], [422, {
              cta_url: ["The cta url field must be an address starting with http:// or https://."]
            }], cta_url)
          }
          const deal = data(yield* post(key, { member_id: memberId, title: "Movable" }), 201)
          const moved = yield* patch(key, deal.id, { member_id: other.memberId })
          assert.deepStrictEqual([moved.status, moved.body.errors], [422, unknown])
          const label = yield* patch(key, deal.id, { discount_label: "x".repeat(41) })
          assert.deepStrictEqual([label.status, label.body.errors], [422, { discount_label: ["The discount label field must not be greater than 40 characters."] }])
        }))

      it.effect("GET: newest first by default, oldest first with sort=created_at", () =>
        Effect.gen(function*() {
          const { key, memberId } = yield* chamber
          const ids: Array<number> = []
          for (const title of ["One", "Two", "Three"]) ids.push(data(yield* post(key, { member_id: memberId, title }), 201).id)
          const order = (query: string) => call("GET", `/api/v1/deals${query}`, { key }).pipe(Effect.map((r) => r.body.data.map((d: any) => d.id)))
          assert.deepStrictEqual(yield* order(""), [...ids].reverse())
          assert.deepStrictEqual(yield* order("?sort=created_at"), ids)
        }))
    })
  })
}
