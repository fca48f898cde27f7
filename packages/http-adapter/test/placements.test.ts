/**
 * GET /api/v1/placements over HTTP (docs/api.md "Placements"), on every storage runtime: only
 * live ad rows with a creative of the key's chamber, current first and the other sorts, the
 * aggregate counts and ctr, and never an internal field, though the rows are made through the
 * core library with every one of them set. Access and paging errors are checked by contract.test.ts.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"
import { Members, type PlacementCreate, PlacementResource, Placements, Sponsorships } from "@chamber/core"
import { runtimes } from "@chamber/pg-adapter/testing"
import { call, chamberWithKey, serverOn } from "./fixture.ts"
import { assertShowsOnly, type FeedRow, day, getRaw } from "./feeds.ts"

const PATH = "/api/v1/placements"

const chamber = Effect.map(chamberWithKey("placements:read"), (c) => ({ ...c, tenantId: c.tenant.id }))

const place = (tenantId: number, input: PlacementCreate) =>
  Effect.gen(function*() {
    return yield* (yield* Placements).create(tenantId, input)
  }).pipe(Effect.orDie)

/** The `ad_slot` of each placement listed, in order. */
const slots = (key: string, query = "") =>
  call("GET", `${PATH}${query}`, { key }).pipe(Effect.map((r) => {
    assert.strictEqual(r.status, 200, JSON.stringify(r.body))
    return r.body.data.map((p: FeedRow) => p.attributes.ad_slot) as Array<string>
  }))

for (const rt of runtimes()) {
  describe(`placements over HTTP on ${rt.name}`, () => {
    layer(serverOn(rt), { timeout: 120_000 })((it) => {
      it.effect("only live ads of the key's chamber that carry a creative: a headline, a body or an image that is not blank", () =>
        Effect.gen(function*() {
          const a = yield* chamber
          const b = yield* chamber
          const live = [
            { ad_slot: "headline", status: "active", ad_headline: "Spring sale" },
            { ad_slot: "body", status: "active", ad_body: "20% off", starts_on: day(-3), ends_on: day(3) },
            { ad_slot: "image", status: "active", ad_image_url: "https://cdn.example/a.png", starts_on: day(0), ends_on: day(0) }
          ] as const
          const notLive = [
            { ad_slot: "no creative", status: "active", ad_cta_label: "Go", ad_link_url: "https://acme.example" },
            { ad_slot: "blank creative", status: "active", ad_headline: "   ", ad_body: "" },
            { ad_slot: "pending", status: "pending", ad_headline: "Hi" },
            { ad_slot: "fulfilled", status: "fulfilled", ad_headline: "Hi" },
            { ad_slot: "cancelled", status: "cancelled", ad_headline: "Hi" },
            { ad_slot: "starts tomorrow", status: "active", ad_headline: "Hi", starts_on: day(1) },
            { ad_slot: "ended yesterday", status: "active", ad_headline: "Hi", ends_on: day(-1) }
          ] as const
          for (const input of [...live, ...notLive]) yield* place(a.tenantId, input)
          // Tier and logo-wall sponsorships are no placements; another chamber's ad is never ours.
          for (const kind of ["tier", "logo_wall"] as const) {
            yield* (yield* Sponsorships).create(a.tenantId, { name: kind, status: "active", kind }).pipe(Effect.orDie)
          }
          yield* place(b.tenantId, { ad_slot: "theirs", status: "active", ad_headline: "Theirs" })

          const reply = yield* call("GET", PATH, { key: a.key })
          assert.strictEqual(reply.status, 200, JSON.stringify(reply.body))
          assert.sameMembers(reply.body.data.map((p: FeedRow) => p.attributes.ad_slot), live.map((p) => p.ad_slot))
          assert.deepStrictEqual(reply.body.meta, { current_page: 1, per_page: 100, total: 3, last_page: 1 })
          assert.deepStrictEqual(yield* slots(b.key), ["theirs"])
        }))

      it.effect("current first by default (latest start first, no start last, id breaking ties); starts_on and created_at either way", () =>
        Effect.gen(function*() {
          const a = yield* chamber
          const made: Record<string, number> = {}
          for (const [slot, starts_on] of [["p1", day(-30)], ["p2", null], ["p3", day(-2)], ["p4", day(-2)]] as const) {
            made[slot] = (yield* place(a.tenantId, { ad_slot: slot, ad_headline: "Hi", status: "active", starts_on })).id
          }
          const sql = yield* SqlClient.SqlClient
          for (const [slot, minute] of Object.entries({ p4: 0, p2: 1, p1: 2, p3: 2 })) {
            yield* sql`UPDATE sponsorships SET created_at = '2026-01-01T00:00:00Z'::timestamptz + ${minute} * interval '1 minute' WHERE id = ${made[slot]!}`
          }
          const current = ["p4", "p3", "p1", "p2"]
          assert.deepStrictEqual(yield* slots(a.key), current)
          assert.deepStrictEqual(yield* slots(a.key, "?sort=-starts_on"), current)
          assert.deepStrictEqual(yield* slots(a.key, "?sort=starts_on"), ["p1", "p3", "p4", "p2"])
          assert.deepStrictEqual(yield* slots(a.key, "?sort=created_at"), ["p4", "p2", "p1", "p3"])
          assert.deepStrictEqual(yield* slots(a.key, "?sort=-created_at"), ["p3", "p1", "p2", "p4"])
          assert.deepStrictEqual(yield* slots(a.key, "?sort=-clicks"), current)
        }))

      it.effect("the attributes as stored, with impressions, clicks and ctr = clicks / impressions (0 without impressions)", () =>
        Effect.gen(function*() {
          const a = yield* chamber
          const member = yield* (yield* Members).create(a.tenantId, { name: "Acme", status: "active" }).pipe(Effect.orDie)
          const full = yield* place(a.tenantId, {
            member_id: member.id,
            ad_slot: "full",
            ad_kind: "image",
            ad_headline: "Spring tune-ups",
            ad_body: "20% off in April",
            ad_cta_label: "Book now",
            ad_link_url: "https://acme.example/spring",
            ad_image_url: "https://cdn.acme.example/spring.png",
            is_house_ad: true,
            is_included_benefit: true,
            starts_on: day(-1),
            ends_on: day(30),
            status: "active",
            impressions: 1000,
            clicks: 25
          })
          yield* place(a.tenantId, { ad_slot: "third", ad_headline: "Hi", status: "active", starts_on: day(-2), impressions: 3, clicks: 1 })
          yield* place(a.tenantId, { ad_slot: "unseen", ad_headline: "Hi", status: "active", starts_on: day(-3) })
          const reply = yield* call("GET", PATH, { key: a.key })
          assert.deepStrictEqual(reply.body.data[0], {
            id: full.id,
            attributes: {
              member_id: member.id,
              ad_slot: "full",
              ad_kind: "image",
              ad_headline: "Spring tune-ups",
              ad_body: "20% off in April",
              ad_cta_label: "Book now",
              ad_link_url: "https://acme.example/spring",
              ad_image_url: "https://cdn.acme.example/spring.png",
              is_house_ad: true,
              is_included_benefit: true,
              starts_on: day(-1),
              ends_on: day(30),
              status: "active",
              impressions: 1000,
              clicks: 25,
              ctr: 0.025
            },
            created_at: full.created_at,
            updated_at: full.updated_at
          })
          assert.deepStrictEqual(
            reply.body.data.map((p: FeedRow) => [p.attributes.impressions, p.attributes.clicks, p.attributes.ctr]),
            [[1000, 25, 0.025], [3, 1, 1 / 3], [0, 0, 0]]
          )
        }))

      it.effect("never amount_cents, invoice_id, notes or kind, as keys or values, though every row has them", () =>
        Effect.gen(function*() {
          const a = yield* chamber
          yield* place(a.tenantId, {
            ad_slot: "paid",
            ad_headline: "Hi",
            status: "active",
            amount_cents: 8_675_309,
            invoice_id: 5_551_212,
            notes: "INTERNAL-NOTE-do-not-show"
          })
          const reply = yield* getRaw(PATH, a.key)
          assert.strictEqual(reply.status, 200)
          assertShowsOnly(reply, PlacementResource.keys, {
            names: ["amount_cents", "invoice_id", "notes", "kind", "name"],
            values: ["8675309", "5551212", "INTERNAL-NOTE", '"ad"']
          })
        }))
    })
  })
}
