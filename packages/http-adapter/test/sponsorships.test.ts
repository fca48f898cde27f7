/**
 * GET /api/v1/sponsorships over HTTP (docs/api.md "Sponsorships"), on every storage runtime:
 * only live tier and logo-wall rows of the key's chamber, current first and the other sorts,
 * the member's current name, and never an internal field, though the rows are made through the
 * core library with every one of them set. Access and paging errors are checked by contract.test.ts.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"
import { Members, Placements, type SponsorshipCreate, SponsorshipResource, Sponsorships } from "@chamber/core"
import { runtimes } from "@chamber/pg-adapter/testing"
import { call, chamberWithKey, serverOn } from "./fixture.ts"
import { assertShowsOnly, type FeedRow, day, getRaw } from "./feeds.ts"

const PATH = "/api/v1/sponsorships"

/** A chamber with a sponsorships:read key and a member. */
const chamber = Effect.gen(function*() {
  const c = yield* chamberWithKey("sponsorships:read")
  const member = yield* (yield* Members).create(c.tenant.id, { name: "Acme & Sons", status: "active" }).pipe(Effect.orDie)
  return { ...c, tenantId: c.tenant.id, memberId: member.id }
})

const sponsor = (tenantId: number, input: SponsorshipCreate) =>
  Effect.gen(function*() {
    return yield* (yield* Sponsorships).create(tenantId, input)
  }).pipe(Effect.orDie)

const names = (key: string, query = "") =>
  call("GET", `${PATH}${query}`, { key }).pipe(Effect.map((r) => {
    assert.strictEqual(r.status, 200, JSON.stringify(r.body))
    return r.body.data.map((s: FeedRow) => s.attributes.name) as Array<string>
  }))

for (const rt of runtimes()) {
  describe(`sponsorships over HTTP on ${rt.name}`, () => {
    layer(serverOn(rt), { timeout: 120_000 })((it) => {
      it.effect("only live tier and logo-wall sponsorships of the key's chamber: active, today within their dates, a missing date open", () =>
        Effect.gen(function*() {
          const a = yield* chamber
          const b = yield* chamber
          const live = [
            { name: "open", status: "active" },
            { name: "running", status: "active", starts_on: day(-1), ends_on: day(1) },
            { name: "today only", status: "active", starts_on: day(0), ends_on: day(0) },
            { name: "logo wall", status: "active", kind: "logo_wall", starts_on: day(-10) }
          ] as const
          const notLive = [
            { name: "pending", status: "pending" },
            { name: "fulfilled", status: "fulfilled" },
            { name: "cancelled", status: "cancelled" },
            { name: "starts tomorrow", status: "active", starts_on: day(1) },
            { name: "ended yesterday", status: "active", ends_on: day(-1) },
            { name: "no status given (pending)" }
          ] as const
          for (const input of [...live, ...notLive]) yield* sponsor(a.tenantId, input)
          // An ad is a placement, never a sponsorship; another chamber's sponsorship is never ours.
          yield* (yield* Placements).create(a.tenantId, { ad_headline: "open ad", status: "active" }).pipe(Effect.orDie)
          yield* sponsor(b.tenantId, { name: "theirs", status: "active" })

          const reply = yield* call("GET", PATH, { key: a.key })
          assert.strictEqual(reply.status, 200, JSON.stringify(reply.body))
          assert.sameMembers(reply.body.data.map((s: FeedRow) => s.attributes.name), live.map((s) => s.name))
          assert.deepStrictEqual(reply.body.meta, { current_page: 1, per_page: 100, total: 4, last_page: 1 })
          assert.deepStrictEqual(yield* names(b.key), ["theirs"])
        }))

      it.effect("current first by default (latest start first, no start last, id breaking ties); starts_on and created_at either way", () =>
        Effect.gen(function*() {
          const a = yield* chamber
          const made: Record<string, number> = {}
          for (const [name, starts_on] of [["s1", day(-30)], ["s2", day(-10)], ["s3", null], ["s4", day(-10)], ["s5", day(-1)]] as const) {
            made[name] = (yield* sponsor(a.tenantId, { name, status: "active", starts_on })).id
          }
          // Creation times in another order than ids, with a tie (s1 and s5).
          const sql = yield* SqlClient.SqlClient
          const minutes: Record<string, number> = { s3: 0, s1: 1, s5: 1, s2: 2, s4: 3 }
          for (const [name, minute] of Object.entries(minutes)) {
            yield* sql`UPDATE sponsorships SET created_at = '2026-01-01T00:00:00Z'::timestamptz + ${minute} * interval '1 minute' WHERE id = ${made[name]!}`
          }
          const current = ["s5", "s4", "s2", "s1", "s3"]
          assert.deepStrictEqual(yield* names(a.key), current)
          assert.deepStrictEqual(yield* names(a.key, "?sort=-starts_on"), current)
          assert.deepStrictEqual(yield* names(a.key, "?sort=starts_on"), ["s1", "s2", "s4", "s5", "s3"])
          assert.deepStrictEqual(yield* names(a.key, "?sort=created_at"), ["s3", "s1", "s5", "s2", "s4"])
          assert.deepStrictEqual(yield* names(a.key, "?sort=-created_at"), ["s4", "s2", "s5", "s1", "s3"])
          for (const unknown of ["name", "-ends_on", "", "id", "starts_on,created_at"]) {
            assert.deepStrictEqual(yield* names(a.key, `?sort=${unknown}`), current, unknown)
          }
          const past = yield* call("GET", `${PATH}?page=2`, { key: a.key })
          assert.deepStrictEqual(past.body, { data: [], meta: { current_page: 2, per_page: 100, total: 5, last_page: 1 } })
        }))

      it.effect("the attributes as stored; member_name is the member's current name, null without a member", () =>
        Effect.gen(function*() {
          const a = yield* chamber
          const made = yield* sponsor(a.tenantId, {
            member_id: a.memberId,
            name: "Gold 2026",
            status: "active",
            starts_on: day(-5),
            ends_on: day(5),
            sponsorship_package_id: 12,
            tier: "Gold"
          })
          yield* sponsor(a.tenantId, { name: "anonymous", status: "active", starts_on: day(-6) })
          yield* (yield* Members).update(a.tenantId, a.memberId, { name: "Acme Holdings" }).pipe(Effect.orDie)
          const reply = yield* call("GET", PATH, { key: a.key })
          assert.deepStrictEqual(reply.body.data[0], {
            id: made.id,
            attributes: {
              member_id: a.memberId,
              member_name: "Acme Holdings",
              name: "Gold 2026",
              status: "active",
              starts_on: day(-5),
              ends_on: day(5),
              sponsorship_package_id: 12,
              tier: "Gold",
              event_id: null
            },
            created_at: made.created_at,
            // The member's new name is a change of what the sponsorship shows (ruling 30).
            updated_at: reply.body.data[0].updated_at
          })
          assert.isAbove(Date.parse(reply.body.data[0].updated_at), Date.parse(made.updated_at!))
          assert.deepStrictEqual([reply.body.data[1].attributes.name, reply.body.data[1].attributes.member_name], ["anonymous", null])
        }))

      it.effect("never amount_cents, invoice_id, notes or kind, as keys or values, though every row has them", () =>
        Effect.gen(function*() {
          const a = yield* chamber
          for (const [name, kind] of [["Gold", "tier"], ["Wall", "logo_wall"]] as const) {
            yield* sponsor(a.tenantId, {
              member_id: a.memberId,
              name,
              status: "active",
              kind,
              amount_cents: 8_675_309,
              invoice_id: 5_551_212,
              notes: "INTERNAL-NOTE-do-not-show"
            })
          }
          const reply = yield* getRaw(PATH, a.key)
          assert.strictEqual(reply.status, 200)
          assert.strictEqual(reply.body.data.length, 2)
          assertShowsOnly(reply, SponsorshipResource.keys, {
            names: ["amount_cents", "invoice_id", "notes", "kind"],
            values: ["8675309", "5551212", "INTERNAL-NOTE", "logo_wall"]
          })
        }))
    })
  })
}
