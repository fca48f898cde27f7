/**
 * Incremental sync (ruling 30, docs/api.md "Incremental sync"), on every list of the contract
 * whose items carry `updated_at`, on every storage runtime. The lists are read from the OpenAPI
 * document: every GET answering `{data: [...], meta}` of items with `updated_at`, the webhook list
 * excepted. Each is checked alike: `updated_since` at or after (offsets, milliseconds, years 0001
 * and 9999), `sort=updated_at` and `-updated_at` with ties by id, its PageMeta, its 422, and its
 * own filters. A row of each list is made through the core library (`MAKERS`, the only thing a
 * list needs here); its `updated_at` is then set to known moments with the stamping triggers off
 * (`stampAt`), so boundaries and ties are exact.
 */
import { assert, describe, layer } from "@effect/vitest"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as OpenApi from "effect/http-api/OpenApi"
import { Bookings, Contacts, Deals, Events, Invoices, Members, Payments, Placements, Registrations, Sponsorships } from "@chamber/core"
import { runtimes } from "@chamber/pg-adapter/testing"
import { Api } from "../src/index.ts"
import { assertInvalid } from "./assertions.ts"
import { call, chamberWithKey, serverOn } from "./fixture.ts"

type Json = Record<string, any>
const document = OpenApi.fromApi(Api) as unknown as Json

const schemaOf = (ref: string | undefined): Json | undefined =>
  ref === undefined ? undefined : document.components.schemas[ref.replace("#/components/schemas/", "")]

/** Every GET of the document answering a page of items that carry `updated_at`; the webhook list is not one (ruling 30). */
const LISTS: ReadonlyArray<{ readonly path: string; readonly parameters: ReadonlyArray<Json> }> = Object.entries(document.paths as Json)
  .flatMap(([path, item]) => {
    const get: Json | undefined = item.get
    const list = schemaOf(get?.responses?.["200"]?.content?.["application/json"]?.schema?.$ref)
    const items = schemaOf(list?.properties?.data?.items?.$ref)
    const carries = list?.properties?.meta !== undefined && items?.properties?.updated_at !== undefined
    return carries && !path.startsWith("/api/v1/hooks") ? [{ path, parameters: get!.parameters as ReadonlyArray<Json> }] : []
  })

/** What a list needs to answer at all: a search's criteria. */
const FILTERS: Record<string, string> = {
  "/api/v1/members/search": "name=acme",
  "/api/v1/contacts/search": "email=ann.lee%40acme.example"
}

interface Chamber {
  readonly tenantId: number
  readonly memberId: number
  readonly eventId: number
}

let n = 0

/** A draft invoice of $100.00 to the chamber's member. */
const draftFor = (c: Chamber) => ({ member_id: c.memberId, lines: [{ description: "Dues", unit: 10_000, quantity: 1 }] })

/** The id of the row a core service makes: `made(Members, (s) => s.create(...))`. */
const made = <I, S, E, R>(service: Context.Key<I, S>, make: (s: S) => Effect.Effect<{ readonly id: number }, E, R>) =>
  Effect.map(Effect.flatMap(Effect.service(service), make), (row) => row.id)

const tomorrow = () => new Date(Date.now() + 86_400_000).toISOString()

/** How one row of each list is made, and the table it is stored in. */
const MAKERS: Record<string, { readonly table: string; readonly make: (c: Chamber) => Effect.Effect<number, unknown, any> }> = {
  "/api/v1/members": { table: "members", make: (c) => made(Members, (s) => s.create(c.tenantId, { name: `Acme ${++n}`, status: "active" })) },
  "/api/v1/contacts": {
    table: "contacts",
    make: (c) => made(Contacts, (s) => s.create(c.tenantId, { first_name: "Ann", last_name: `Lee ${++n}`, email: "ann.lee@acme.example" }))
  },
  "/api/v1/events": { table: "events", make: (c) => made(Events, (s) => s.create(c.tenantId, { title: `Gala ${++n}`, starts_at: "2027-01-10T18:00:00.000Z" })) },
  "/api/v1/events/{event}/registrations": { table: "registrations", make: (c) => made(Registrations, (s) => s.create(c.tenantId, c.eventId, { first_name: `Guest ${++n}` })) },
  "/api/v1/invoices": { table: "invoices", make: (c) => made(Invoices, (s) => s.create(c.tenantId, draftFor(c))) },
  "/api/v1/payments": {
    table: "payments",
    make: (c) =>
      Effect.gen(function*() {
        const invoices = yield* Invoices
        const draft = yield* invoices.create(c.tenantId, draftFor(c))
        yield* invoices.issue(c.tenantId, draft.id)
        return (yield* (yield* Payments).record(c.tenantId, draft.id, { method: "check", amount: 2_500 })).id
      })
  },
  "/api/v1/deals": { table: "deals", make: (c) => made(Deals, (s) => s.create(c.tenantId, { member_id: c.memberId, title: `Deal ${++n}` })) },
  "/api/v1/sponsorships": { table: "sponsorships", make: (c) => made(Sponsorships, (s) => s.create(c.tenantId, { name: `Gold ${++n}`, status: "active", kind: "tier" })) },
  "/api/v1/placements": { table: "sponsorships", make: (c) => made(Placements, (s) => s.create(c.tenantId, { ad_headline: `Ad ${++n}`, status: "active" })) },
  "/api/v1/bookings": { table: "bookings", make: (c) => made(Bookings, (s) => s.create(c.tenantId, { booking_type_name: "Room A", starts_at: tomorrow() })) }
}
MAKERS["/api/v1/members/search"] = MAKERS["/api/v1/members"]!
MAKERS["/api/v1/contacts/search"] = MAKERS["/api/v1/contacts"]!

/** Sets rows' `updated_at` as given, with the triggers that stamp it off for this one transaction. */
const stampAt = (table: string, stamps: ReadonlyArray<readonly [number, string]>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.withTransaction(Effect.gen(function*() {
      yield* sql`SET LOCAL session_replication_role = replica`
      for (const [id, at] of stamps) yield* sql`UPDATE ${sql.literal(table)} SET updated_at = ${at}::timestamptz WHERE id = ${id}`
    }))
  }).pipe(Effect.orDie)

const T0 = "2030-01-01T00:00:00.000Z"
const T1 = "2030-01-01T00:00:00.001Z"
const T2 = "2030-01-01T00:00:01.000Z"
const T3 = "2030-01-02T00:00:00.000Z"

/** Malformed `updated_since` values: no offset, a date alone, no such day, past the years 0001 to 9999, not a date. */
const MALFORMED = [
  "yesterday",
  "2030-01-01",
  "2030-01-01T00:00:00",
  "2030-02-30T00:00:00Z",
  "2030-01-01T24:00:00Z",
  "10000-01-01T00:00:00Z",
  "0001-01-01T00:00:00+01:00",
  "9999-12-31T23:59:59-01:00",
  "2030-01-01T00:00:00Z2"
]

for (const rt of runtimes()) {
  describe(`updated_since and sort=updated_at on every list carrying updated_at, on ${rt.name}`, () => {
  layer(serverOn(rt), { timeout: 120_000 })((it) => {
    it("the contract's lists carrying updated_at are found, the webhook list is not among them, and each sorts by updated_at", () => {
      assert.sameMembers(LISTS.map((l) => l.path), Object.keys(MAKERS))
      for (const { parameters, path } of LISTS) {
        assert.includeMembers(parameters.find((p) => p.name === "sort")?.schema.anyOf?.[0]?.enum ?? [], ["updated_at", "-updated_at"], path)
      }
    })

    for (const { parameters, path } of LISTS) {
      it("declares updated_since as a date-time beside the other list parameters: " + path, () => {
        const names = parameters.map((p) => p.name)
        assert.includeMembers(names, ["updated_since", "sort", "page"])
        const since = parameters.find((p) => p.name === "updated_since")!
        assert.deepStrictEqual([since.in, since.required ?? false, since.schema.format], ["query", false, "date-time"])
        const sort = parameters.find((p) => p.name === "sort")!
        assert.includeMembers(sort.schema.anyOf[0].enum, ["updated_at", "-updated_at"])
      })

      it.effect(`${path}: rows at or after updated_since, both sorts with ties by id, PageMeta, the 422`, () =>
        Effect.gen(function*() {
          const chamber = yield* chamberWithKey("all")
          const tenantId = chamber.tenant.id
          const member = yield* (yield* Members).create(tenantId, { name: "Acme Base", status: "active" })
          const event = yield* (yield* Events).create(tenantId, { title: "Gala", starts_at: "2027-01-10T18:00:00.000Z" })
          const c: Chamber = { tenantId, memberId: member.id, eventId: event.id }
          const maker = MAKERS[path]!
          const ids: Array<number> = []
          for (let i = 0; i < 5; i++) ids.push(yield* maker.make(c).pipe(Effect.orDie))
          const [r0, r1, r2, r3, r4] = ids as [number, number, number, number, number]
          // The first made is the last changed; r1 and r3 changed in the same millisecond.
          yield* stampAt(maker.table, [[r0, T3], [r1, T1], [r2, T2], [r3, T1], [r4, T0]])

          const base = path.replace("{event}", String(event.id))
          const get = (query: string) => call("GET", `${base}?${[FILTERS[path], query].filter((q) => q !== undefined && q !== "").join("&")}`, { key: chamber.key })
          const page = (query: string) =>
            Effect.map(get(query), (reply) => {
              assert.strictEqual(reply.status, 200, `${path}?${query}: ${JSON.stringify(reply.body)}`)
              return { ids: reply.body.data.map((r: Json) => r.id) as Array<number>, stamps: reply.body.data.map((r: Json) => r.updated_at), meta: reply.body.meta }
            })
          const meta = (current: number, total: number) => ({ current_page: current, per_page: 100, total, last_page: Math.max(1, Math.ceil(total / 100)) })

          const all = yield* page("")
          const since0 = yield* page(`updated_since=${T0}&sort=updated_at`)
          assert.deepStrictEqual(since0.ids, [r4, r1, r3, r2, r0], `${path} ascending, ties by id`)
          assert.deepStrictEqual(since0.stamps, [T0, T1, T1, T2, T3])
          assert.deepStrictEqual(since0.meta, meta(1, 5))
          assert.deepStrictEqual((yield* page(`updated_since=${T0}&sort=-updated_at`)).ids, [r0, r2, r3, r1, r4], `${path} descending`)

          // At or after: the row of that very millisecond is in, whatever the offset it is written with.
          const sinceT1 = yield* page(`updated_since=${T1}&sort=updated_at`)
          assert.deepStrictEqual([sinceT1.ids, sinceT1.meta], [[r1, r3, r2, r0], meta(1, 4)])
          assert.deepStrictEqual((yield* page(`updated_since=${encodeURIComponent("2030-01-01T01:00:00.001+01:00")}&sort=updated_at`)).ids, [r1, r3, r2, r0])
          assert.deepStrictEqual((yield* page("updated_since=2030-01-01T00:00:00.002Z&sort=updated_at")).ids, [r2, r0])
          // Without a sort the list's own order holds, over the same rows.
          assert.sameMembers((yield* page(`updated_since=${T1}`)).ids, [r1, r3, r2, r0])

          // The years 0001 and 9999 are moments like any other.
          const first = yield* page("updated_since=0001-01-01T00:00:00Z")
          assert.deepStrictEqual([first.meta.total, first.ids.length], [all.meta.total, all.ids.length])
          assert.deepStrictEqual(yield* page("updated_since=9999-12-31T23:59:59.999Z"), { ids: [], stamps: [], meta: meta(1, 0) })

          // A page past the filtered rows is empty and keeps their total.
          assert.deepStrictEqual(yield* page(`updated_since=${T1}&sort=updated_at&page=2`), { ids: [], stamps: [], meta: meta(2, 4) })

          // Over the whole list, sort=updated_at is by updated_at, then id.
          const everything = yield* page("sort=updated_at")
          const keys = everything.ids.map((id, i) => [everything.stamps[i], id] as const)
          assert.deepStrictEqual(keys, [...keys].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1])))

          for (const value of MALFORMED) {
            const errors = assertInvalid(yield* get(`updated_since=${encodeURIComponent(value)}`), ["updated_since"], `${path} ${value}`)
            assert.match(errors.updated_since![0]!, /^The updated since field must be a date-time/)
          }
        }), 120_000)
    }

    it.effect("members: updated_since across pages, with status and with a name search, PageMeta of the filtered rows", () =>
      Effect.gen(function*() {
        const chamber = yield* chamberWithKey("all")
        const members = yield* Members
        const ids: Array<number> = []
        for (let i = 0; i < 130; i++) {
          ids.push((yield* members.create(chamber.tenant.id, { name: `Acme ${String(i).padStart(3, "0")}`, status: i % 2 === 0 ? "active" : "pending" })).id)
        }
        yield* members.create(chamber.tenant.id, { name: "Acme Old", status: "active" })
        // Two rows a millisecond, last made first: updated_at order is not id order.
        const stamped = ids.map((id, i) => [id, new Date(Date.parse(T0) + Math.floor((ids.length - 1 - i) / 2)).toISOString()] as const)
        yield* stampAt("members", stamped)
        const expected = [...stamped].sort((a, b) => (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : a[0] - b[0])).map(([id]) => id)

        const read = (path: string) =>
          Effect.map(call("GET", path, { key: chamber.key }), (reply) => {
            assert.strictEqual(reply.status, 200, JSON.stringify(reply.body))
            return { ids: reply.body.data.map((r: Json) => r.id) as Array<number>, meta: reply.body.meta }
          })
        for (const list of ["/api/v1/members?", "/api/v1/members/search?name=acme%20&"]) {
          const p1 = yield* read(`${list}updated_since=${T0}&sort=updated_at`)
          const p2 = yield* read(`${list}updated_since=${T0}&sort=updated_at&page=2`)
          assert.deepStrictEqual([p1.meta, p2.meta], [
            { current_page: 1, per_page: 100, total: 130, last_page: 2 },
            { current_page: 2, per_page: 100, total: 130, last_page: 2 }
          ], list)
          assert.deepStrictEqual([...p1.ids, ...p2.ids], expected, list)
          const back = yield* read(`${list}updated_since=${T0}&sort=-updated_at&page=2`)
          assert.deepStrictEqual(back.ids, [...expected].reverse().slice(100), list)
        }
        const pending = yield* read(`/api/v1/members?status=pending&updated_since=${T0}&sort=updated_at`)
        const odd = new Set(ids.filter((_, i) => i % 2 === 1))
        assert.deepStrictEqual(pending.ids, expected.filter((id) => odd.has(id)))
        assert.deepStrictEqual(pending.meta, { current_page: 1, per_page: 100, total: 65, last_page: 1 })
        // A name search by updated_at, with and without updated_since, is a search still.
        const named = yield* read("/api/v1/members/search?name=old&sort=-updated_at")
        assert.strictEqual(named.meta.total, 1)
        const later = yield* read(`/api/v1/members/search?name=Acme%2000&updated_since=${stamped[2]![1]}&sort=updated_at`)
        const firstTen = new Set(ids.slice(0, 10))
        assert.deepStrictEqual(later.ids, expected.filter((id) => firstTen.has(id) && stamped[ids.indexOf(id)]![1] >= stamped[2]![1]))
      }), 120_000)
  })
  })
}
