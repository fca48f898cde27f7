/**
 * GET /api/v1/members and GET /api/v1/members/search over HTTP (docs/api.md "Members" and
 * "Lists, paging, sorting"), on every storage runtime. One chamber of 105 members is made once
 * per suite: 35 names and 35 creation times, three members each, so that name order, creation
 * order and id order all differ and every page boundary cuts through ties.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import { Members, MemberStatuses } from "@chamber/core"
import { runtimes } from "@chamber/pg-adapter/testing"
import { assertInvalid, assertList } from "./assertions.ts"
import { call, chamberWithKey, type Reply, serverOn } from "./fixture.ts"

interface Row {
  readonly id: number
  readonly name: string
  readonly status: string
  readonly createdAt: number
}

const BASE = Date.UTC(2024, 0, 1)
const MINUTE = 60_000

/** The 105-member chamber, made once per suite. */
class Hundred extends Context.Service<Hundred, { readonly key: string; readonly rows: ReadonlyArray<Row> }>()(
  "test/Hundred"
) {}

const HundredLive = Layer.effect(Hundred, Effect.gen(function*() {
  const { tenant, key } = yield* chamberWithKey("members:read")
  const members = yield* Members
  const sql = yield* SqlClient.SqlClient
  const made: Array<{ id: number; name: string; status: string }> = []
  for (let i = 0; i < 105; i++) {
    const name = `Row ${String((i * 2) % 35).padStart(2, "0")}`
    const status = MemberStatuses[i % 4]!
    const member = yield* members.create(tenant.id, { name, status })
    made.push({ id: member.id, name, status })
  }
  // Creation times that order the rows neither by id nor by name, three to a minute.
  yield* sql`UPDATE members SET created_at = ${new Date(BASE).toISOString()}::timestamptz + ((id * 18) % 35) * interval '1 minute'
             WHERE tenant_id = ${tenant.id}`
  const rows = made.map((m) => ({ ...m, createdAt: BASE + ((m.id * 18) % 35) * MINUTE }))
  return { key, rows }
}).pipe(Effect.orDie))

const byName = (a: Row, b: Row) => (a.name.toLowerCase() < b.name.toLowerCase() ? -1 : a.name.toLowerCase() > b.name.toLowerCase() ? 1 : a.id - b.id)
const byCreated = (a: Row, b: Row) => a.createdAt - b.createdAt || a.id - b.id
const ids = (rows: ReadonlyArray<Row>) => rows.map((r) => r.id)

/** Descending by `key`; ties by id, in either direction as long as it is one of them. */
const descendingVariants = (rows: ReadonlyArray<Row>, key: (r: Row) => string | number) => {
  const cmp = (a: Row, b: Row) => (key(a) < key(b) ? 1 : key(a) > key(b) ? -1 : 0)
  return [
    ids([...rows].sort((a, b) => cmp(a, b) || b.id - a.id)),
    ids([...rows].sort((a, b) => cmp(a, b) || a.id - b.id))
  ]
}

const EMPTY_META = { current_page: 1, per_page: 100, total: 0, last_page: 1 }

const assert422 = (reply: Reply, field: string, label = "") => assertInvalid(reply, [field], label)

/** Both pages of a 105-row listing, concatenated, as ids. */
const bothPages = (path: string, key: string) =>
  Effect.gen(function*() {
    const sep = path.includes("?") ? "&" : "?"
    const p1 = yield* call("GET", `${path}${sep}page=1`, { key })
    const p2 = yield* call("GET", `${path}${sep}page=2`, { key })
    assertList(p1)
    assertList(p2)
    return [...p1.body.data, ...p2.body.data].map((m: any) => m.id as number)
  })

const memberNames = (reply: Reply): Array<string> => reply.body.data.map((m: any) => m.attributes.name)

for (const rt of runtimes()) {
  describe(`members list and search over HTTP on ${rt.name}`, () => {
    layer(HundredLive.pipe(Layer.provideMerge(serverOn(rt))), { timeout: 120_000 })((it) => {
      it.effect("pages hold 100 rows; page 2 holds the last 5; a page past the end is 200 with data [] and the true meta", () =>
        Effect.gen(function*() {
          const { key } = yield* Hundred
          const first = yield* call("GET", "/api/v1/members", { key })
          assertList(first)
          assert.strictEqual(first.body.data.length, 100)
          assert.deepStrictEqual(first.body.meta, { current_page: 1, per_page: 100, total: 105, last_page: 2 })
          const one = yield* call("GET", "/api/v1/members?page=1", { key })
          assert.deepStrictEqual(one.body, first.body)
          const second = yield* call("GET", "/api/v1/members?page=2", { key })
          assertList(second)
          assert.strictEqual(second.body.data.length, 5)
          assert.deepStrictEqual(second.body.meta, { current_page: 2, per_page: 100, total: 105, last_page: 2 })
          const third = yield* call("GET", "/api/v1/members?page=3", { key })
          assert.deepStrictEqual([third.status, third.body], [200, {
            data: [],
            meta: { current_page: 3, per_page: 100, total: 105, last_page: 2 }
          }])
          const far = yield* call("GET", "/api/v1/members?page=1000", { key })
          assert.deepStrictEqual([far.status, far.body], [200, {
            data: [],
            meta: { current_page: 1000, per_page: 100, total: 105, last_page: 2 }
          }])
        }))

      it.effect("default order and sort=name: by name (case-insensitive), id breaking ties; pages neither overlap nor skip", () =>
        Effect.gen(function*() {
          const { key, rows } = yield* Hundred
          const expected = ids([...rows].sort(byName))
          // The fixture's premise: rows 100 and 101 share a name, so the two-page order below also
          // proves that equal names keep id order across the page boundary.
          const named = [...rows].sort(byName)
          assert.strictEqual(named[99]!.name, named[100]!.name)
          assert.deepStrictEqual(yield* bothPages("/api/v1/members", key), expected)
          assert.deepStrictEqual(yield* bothPages("/api/v1/members?sort=name", key), expected)
        }))

      it.effect("sort=-name, sort=created_at and sort=-created_at, with id as tie-breaker", () =>
        Effect.gen(function*() {
          const { key, rows } = yield* Hundred
          const minusName = yield* bothPages("/api/v1/members?sort=-name", key)
          assert.include(
            descendingVariants(rows, (r) => r.name.toLowerCase()).map((v) => JSON.stringify(v)),
            JSON.stringify(minusName)
          )
          const created = yield* bothPages("/api/v1/members?sort=created_at", key)
          assert.deepStrictEqual(created, ids([...rows].sort(byCreated)))
          const minusCreated = yield* bothPages("/api/v1/members?sort=-created_at", key)
          assert.include(descendingVariants(rows, (r) => r.createdAt).map((v) => JSON.stringify(v)), JSON.stringify(minusCreated))
          // created_at in the body is the stored time.
          const page = yield* call("GET", "/api/v1/members?sort=created_at", { key })
          assert.strictEqual(page.body.data[0].created_at, new Date(BASE).toISOString())
        }))

      it.effect("an unknown sort value is ignored: the default (name) order applies", () =>
        Effect.gen(function*() {
          const { key, rows } = yield* Hundred
          const expected = ids([...rows].sort(byName)).slice(0, 100)
          for (const sort of ["foo", "-foo", "status", "-status", "id", "NAME", "--name", "name,created_at", ""]) {
            const reply = yield* call("GET", `/api/v1/members?sort=${encodeURIComponent(sort)}`, { key })
            assertList(reply)
            assert.deepStrictEqual(reply.body.data.map((m: any) => m.id), expected, `sort=${sort}`)
          }
        }))

      it.effect("status filters the list, with the filtered total in meta", () =>
        Effect.gen(function*() {
          const { key, rows } = yield* Hundred
          for (const status of MemberStatuses) {
            const reply = yield* call("GET", `/api/v1/members?status=${status}`, { key })
            assertList(reply)
            const expected = rows.filter((r) => r.status === status).sort(byName)
            assert.deepStrictEqual(reply.body.data.map((m: any) => m.id), ids(expected), status)
            assert.isTrue(reply.body.data.every((m: any) => m.attributes.status === status))
            assert.deepStrictEqual(reply.body.meta, { current_page: 1, per_page: 100, total: expected.length, last_page: 1 })
          }
          const sorted = yield* call("GET", "/api/v1/members?status=former&sort=-created_at", { key })
          assert.include(
            descendingVariants(rows.filter((r) => r.status === "former"), (r) => r.createdAt).map((v) => JSON.stringify(v)),
            JSON.stringify(sorted.body.data.map((m: any) => m.id))
          )
          const past = yield* call("GET", "/api/v1/members?status=active&page=2", { key })
          assert.deepStrictEqual(past.body, { data: [], meta: { current_page: 2, per_page: 100, total: 27, last_page: 1 } })
          assert422(yield* call("GET", "/api/v1/members?status=deleted", { key }), "status")
          assert422(yield* call("GET", "/api/v1/members?status=", { key }), "status")
          assert422(yield* call("GET", "/api/v1/members?status=Active", { key }), "status")
        }))

      it.effect("page=0, page=-1, page=abc (and 1.5, empty) answer 422 with errors.page, on the list and on search", () =>
        Effect.gen(function*() {
          const { key } = yield* Hundred
          for (const page of ["0", "-1", "abc", "1.5", ""]) {
            assert422(yield* call("GET", `/api/v1/members?page=${page}`, { key }), "page", `page=${page}`)
            assert422(yield* call("GET", `/api/v1/members/search?name=row&page=${page}`, { key }), "page", `search page=${page}`)
          }
          const zero = yield* call("GET", "/api/v1/members?page=0", { key })
          assert.deepStrictEqual(zero.body, {
            message: "The page field must be an integer of at least 1.",
            errors: { page: ["The page field must be an integer of at least 1."] }
          })
        }))

      it.effect("a chamber without members: data [] and last_page 1; another chamber's rows never show", () =>
        Effect.gen(function*() {
          const { key } = yield* chamberWithKey("members:read")
          const reply = yield* call("GET", "/api/v1/members", { key })
          assert.deepStrictEqual([reply.status, reply.body], [200, { data: [], meta: EMPTY_META }])
          const search = yield* call("GET", "/api/v1/members/search?name=row", { key })
          assert.deepStrictEqual([search.status, search.body], [200, { data: [], meta: EMPTY_META }])
        }))

      it.effect("search: sort and paging apply as on the list", () =>
        Effect.gen(function*() {
          const { key, rows } = yield* Hundred
          const first = yield* call("GET", "/api/v1/members/search?name=ROW", { key })
          assertList(first)
          assert.strictEqual(first.body.data.length, 100)
          assert.deepStrictEqual(first.body.meta, { current_page: 1, per_page: 100, total: 105, last_page: 2 })
          assert.deepStrictEqual(yield* bothPages("/api/v1/members/search?name=ROW", key), ids([...rows].sort(byName)))
          assert.deepStrictEqual(yield* bothPages("/api/v1/members/search?name=row&sort=created_at", key), ids([...rows].sort(byCreated)))
          const minusName = yield* bothPages("/api/v1/members/search?name=row&sort=-name", key)
          assert.include(
            descendingVariants(rows, (r) => r.name.toLowerCase()).map((v) => JSON.stringify(v)),
            JSON.stringify(minusName)
          )
          const unknownSort = yield* call("GET", "/api/v1/members/search?name=row&sort=bogus", { key })
          assert.deepStrictEqual(unknownSort.body.data.map((m: any) => m.id), ids([...rows].sort(byName)).slice(0, 100))
          const narrowed = yield* call("GET", "/api/v1/members/search?name=row%2007", { key })
          assert.deepStrictEqual(narrowed.body.data.map((m: any) => m.id), ids(rows.filter((r) => r.name === "Row 07").sort(byName)))
          assert.deepStrictEqual(narrowed.body.meta, { current_page: 1, per_page: 100, total: 3, last_page: 1 })
          const past = yield* call("GET", "/api/v1/members/search?name=row&page=3", { key })
          assert.deepStrictEqual(past.body, { data: [], meta: { current_page: 3, per_page: 100, total: 105, last_page: 2 } })
        }))

      it.effect("search: email exact and case-insensitive, never a substring; name a case-insensitive substring; both must match", () =>
        Effect.gen(function*() {
          const { key } = yield* chamberWithKey("members:read,members:write")
          const make = (name: string, email?: string) =>
            call("POST", "/api/v1/members", { key, body: { name, status: "active", ...(email ? { email } : {}) } }).pipe(
              Effect.tap((r) => Effect.sync(() => assert.strictEqual(r.status, 201, JSON.stringify(r.body)))),
              Effect.map((r) => r.body.data)
            )
          const widgets = yield* make("Acme Widgets", "Sales@Acme.example")
          yield* make("Acme Tools", "info@acmetools.example")
          yield* make("Other Co", "sales@acme.example.org")
          yield* make("Pure Widget Co", "xsales@acme.example")
          const search = (query: string) => call("GET", `/api/v1/members/search?${query}`, { key })
          const found = (reply: Reply) => {
            assertList(reply)
            return memberNames(reply)
          }

          assert.deepStrictEqual(found(yield* search("email=sales%40acme.example")), ["Acme Widgets"])
          assert.deepStrictEqual(found(yield* search("email=SALES%40ACME.EXAMPLE")), ["Acme Widgets"])
          // A hit is the whole member exactly as it was created, its email as stored.
          assert.deepStrictEqual((yield* search("email=sales%40acme.example")).body.data, [widgets])
          assert.deepStrictEqual(found(yield* search("email=ales%40acme.example")), [])
          assert.deepStrictEqual(found(yield* search("email=sales%40acme.exampl")), [])
          assert.deepStrictEqual(found(yield* search("email=info%40acmetools.example")), ["Acme Tools"])

          const acme = yield* search("name=aCmE")
          assert.deepStrictEqual(found(acme), ["Acme Tools", "Acme Widgets"])
          assert.deepStrictEqual(acme.body.meta, { current_page: 1, per_page: 100, total: 2, last_page: 1 })
          assert.deepStrictEqual(found(yield* search("name=WIDGET")), ["Acme Widgets", "Pure Widget Co"])
          assert.deepStrictEqual(found(yield* search("name=me%20to")), ["Acme Tools"])
          assert.deepStrictEqual(found(yield* search("name=acme&sort=-name")), ["Acme Widgets", "Acme Tools"])
          assert.deepStrictEqual(found(yield* search("name=nothing-like-this")), [])

          // Both given: a member must match both.
          assert.deepStrictEqual(found(yield* search("email=sales%40acme.example&name=widgets")), ["Acme Widgets"])
          assert.deepStrictEqual(found(yield* search("email=sales%40acme.example&name=tools")), [])
        }))

      it.effect("search: neither email nor name, or an invalid email, answers 422", () =>
        Effect.gen(function*() {
          const { key } = yield* Hundred
          for (const query of ["", "?sort=name", "?page=1", "?name=", "?name=%20%20"]) {
            const reply = yield* call("GET", `/api/v1/members/search${query}`, { key })
            const errors = assertInvalid(reply, ["email", "name"], `search${query}`)
            assert.deepStrictEqual(errors, {
              email: ["The email field is required when name is not present."],
              name: ["The name field is required when email is not present."]
            })
          }
          for (const email of ["", "not-an-email", "acme.example", "a%40b", "%40example.com", "a%20b%40example.com"]) {
            assert422(yield* call("GET", `/api/v1/members/search?email=${email}`, { key }), "email", email)
            assert422(yield* call("GET", `/api/v1/members/search?email=${email}&name=row`, { key }), "email", email)
          }
        }))

      it.effect("search: % and _ (and \\) in name match literally, not as LIKE wildcards", () =>
        Effect.gen(function*() {
          const { key } = yield* chamberWithKey("members:read,members:write")
          for (const name of ["Widget 100% Pure", "Widget 1000 Pure", "a_b Corp", "axb Corp", "Back\\slash Ltd", "Backslash Ltd"]) {
            const reply = yield* call("POST", "/api/v1/members", { key, body: { name, status: "active" } })
            assert.strictEqual(reply.status, 201)
          }
          const names = (text: string) =>
            call("GET", `/api/v1/members/search?name=${encodeURIComponent(text)}`, { key }).pipe(Effect.map(memberNames))
          assert.deepStrictEqual(yield* names("100%"), ["Widget 100% Pure"])
          assert.deepStrictEqual(yield* names("%"), ["Widget 100% Pure"])
          assert.deepStrictEqual(yield* names("0%P"), [])
          assert.deepStrictEqual(yield* names("a_b"), ["a_b Corp"])
          assert.deepStrictEqual(yield* names("_"), ["a_b Corp"])
          assert.deepStrictEqual(yield* names("k\\s"), ["Back\\slash Ltd"])
          assert.deepStrictEqual(yield* names("\\"), ["Back\\slash Ltd"])
          assert.deepStrictEqual(yield* names("Widget 10"), ["Widget 100% Pure", "Widget 1000 Pure"])
        }))
    })
  })
}
