/**
 * Paging members over HTTP as a chamber grows and changes (docs/api.md "Lists, paging, sorting"),
 * on every storage runtime: a chamber of 250 members made by POST, some moved by PATCH; every
 * page of the list, of each status and of name searches, in every order, is the slice of the
 * whole order with the exact total in meta (the pages in the back half are read from the end);
 * a page past the end is 200 with data [] and the true meta; totals and searches read again
 * follow the writes in between; another chamber's members never count.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import { MemberStatuses } from "@chamber/core"
import { runtimes } from "@chamber/pg-adapter/testing"
import { assertList } from "./assertions.ts"
import { call, chamberWithKey, serverOn } from "./fixture.ts"

interface Row {
  id: number
  name: string
  status: string
  readonly createdAt: number
}

class Grown extends Context.Service<Grown, { readonly key: string; readonly rows: Array<Row> }>()("test/Grown") {}

const BASE = Date.UTC(2024, 0, 1)
const SIZE = 250

const GrownLive = Layer.effect(Grown, Effect.gen(function*() {
  const { tenant, key } = yield* chamberWithKey("members:read,members:write")
  // Another chamber's members, interleaved, named alike: never listed, never counted.
  const other = yield* chamberWithKey("members:write")
  const sql = yield* SqlClient.SqlClient
  const rows: Array<Row> = []
  for (let i = 0; i < SIZE; i++) {
    const name = `${i % 3 === 0 ? "Harbor" : "harbor"} Shop ${String((i * 7) % 41).padStart(2, "0")}`
    const reply = yield* call("POST", "/api/v1/members", { key, body: { name, status: MemberStatuses[i % 4] } })
    assert.strictEqual(reply.status, 201, JSON.stringify(reply.body))
    const id = reply.body.data.id as number
    rows.push({ id, name, status: MemberStatuses[i % 4]!, createdAt: BASE + ((id * 11) % 53) * 60_000 })
    if (i % 5 === 0) yield* call("POST", "/api/v1/members", { key: other.key, body: { name, status: "active" } })
  }
  yield* sql`UPDATE members SET created_at = ${new Date(BASE).toISOString()}::timestamptz + ((id * 11) % 53) * interval '1 minute'
             WHERE tenant_id = ${tenant.id}`.pipe(Effect.orDie)
  return { key, rows }
}))

const byName = (a: Row, b: Row) => {
  const [x, y] = [a.name.toLowerCase(), b.name.toLowerCase()]
  return x < y ? -1 : x > y ? 1 : a.id - b.id
}
const byCreated = (a: Row, b: Row) => a.createdAt - b.createdAt || a.id - b.id
const ORDERS: ReadonlyArray<readonly [string, (a: Row, b: Row) => number]> = [
  ["", byName],
  ["name", byName],
  ["-name", (a, b) => -byName(a, b)],
  ["created_at", byCreated],
  ["-created_at", (a, b) => -byCreated(a, b)]
]

/** Every page of a listing (one past the end too) against the slices of the expected order. */
const assertEveryPage = (key: string, path: string, rows: ReadonlyArray<Row>) =>
  Effect.gen(function*() {
    for (const [sort, compare] of ORDERS) {
      const expected = [...rows].sort(compare).map((r) => r.id)
      const lastPage = Math.max(1, Math.ceil(expected.length / 100))
      for (let page = 1; page <= lastPage + 1; page++) {
        const query = [path.includes("?") ? "" : "?", sort === "" ? "" : `sort=${sort}&`, `page=${page}`].join("")
        const reply = yield* call("GET", `${path}${path.includes("?") ? "&" : ""}${query}`, { key })
        assertList(reply)
        const label = `${path} sort=${sort} page=${page}`
        assert.deepStrictEqual(reply.body.data.map((m: any) => m.id), expected.slice((page - 1) * 100, page * 100), label)
        assert.deepStrictEqual(reply.body.meta, { current_page: page, per_page: 100, total: expected.length, last_page: lastPage }, label)
      }
    }
  })

const everyListing = (key: string, rows: ReadonlyArray<Row>) =>
  Effect.gen(function*() {
    yield* assertEveryPage(key, "/api/v1/members", rows)
    for (const status of MemberStatuses) yield* assertEveryPage(key, `/api/v1/members?status=${status}`, rows.filter((r) => r.status === status))
    for (const text of ["HARBOR", "shop 1", "p 0"]) {
      yield* assertEveryPage(key, `/api/v1/members/search?name=${encodeURIComponent(text)}`, rows.filter((r) => r.name.toLowerCase().includes(text.toLowerCase())))
    }
  })

for (const rt of runtimes()) {
  describe(`members paging over HTTP as a chamber grows, on ${rt.name}`, () => {
    layer(GrownLive.pipe(Layer.provideMerge(serverOn(rt))), { timeout: 180_000 })((it) => {
      it.effect("every page of every order, of the list, each status and name searches, is the slice of the whole order with the exact total", () =>
        Effect.gen(function*() {
          const { key, rows } = yield* Grown
          yield* everyListing(key, rows)
        }))

      it.effect("after creates and PATCHes of status and name, totals and every page (searches read again included) follow", () =>
        Effect.gen(function*() {
          const { key, rows } = yield* Grown
          for (const row of rows.slice(0, 30)) {
            const status = row.status === "former" ? "active" : "former"
            const reply = yield* call("PATCH", `/api/v1/members/${row.id}`, { key, body: { status } })
            assert.strictEqual(reply.status, 200, JSON.stringify(reply.body))
            row.status = status
          }
          for (const row of rows.slice(30, 40)) {
            const name = `Quay ${row.id}`
            assert.strictEqual((yield* call("PATCH", `/api/v1/members/${row.id}`, { key, body: { name } })).status, 200)
            row.name = name
          }
          const sql = yield* SqlClient.SqlClient
          for (let i = 0; i < 7; i++) {
            const name = `Harbor Shop new ${i}`
            const reply = yield* call("POST", "/api/v1/members", { key, body: { name, status: "pending" } })
            const id = reply.body.data.id as number
            yield* sql`UPDATE members SET created_at = ${new Date(BASE).toISOString()}::timestamptz + ((id * 11) % 53) * interval '1 minute' WHERE id = ${id}`.pipe(
              Effect.orDie
            )
            rows.push({ id, name, status: "pending", createdAt: BASE + ((id * 11) % 53) * 60_000 })
          }
          yield* everyListing(key, rows)
          const far = yield* call("GET", "/api/v1/members?sort=-created_at&page=9", { key })
          assert.deepStrictEqual([far.status, far.body], [200, { data: [], meta: { current_page: 9, per_page: 100, total: rows.length, last_page: 3 } }])
        }))
    })
  })
}
