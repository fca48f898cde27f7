/**
 * The cross-cutting rules of docs/api.md ("Authentication and scopes", "Errors"), checked on
 * every endpoint of the contract, on every storage runtime. The endpoints, their access, path ids
 * and example bodies come from the contract itself: a new endpoint is checked by being in it.
 * HEAD is answered on every GET route as GET is, without the body.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as HttpClient from "effect/http/HttpClient"
import { ALL_SCOPES, Keys } from "@chamber/core"
import { runtimes } from "@chamber/pg-adapter/testing"
import { type Access, AnyValidKey, scopesOf } from "../src/index.ts"
import { assertError, assertMessageOnly } from "./assertions.ts"
import { createdId, creatorOf, type Endpoint, endpoints, madeByEvent, type Method, withReferences } from "./endpoints.ts"
import { anotherKey, call, chamberWithKey, serverOn, serverUrl } from "./fixture.ts"
import { rawExchange, type RawReply, rawRequest } from "./raw.ts"

const METHODS: ReadonlyArray<Method> = ["GET", "POST", "PATCH", "PUT", "DELETE"]
const UNAUTHENTICATED = { message: "Unauthenticated." }
const NOT_FOUND = { message: "Not found." }

/** Whole numbers past every row: 2^53, 2^63 and 2^64, and one of 400 digits. */
const HUGE = ["9007199254740992", "9223372036854775808", "18446744073709551616", "9".repeat(400)]

/** The filter a search needs to answer at all (a list needs none). */
const FILTERS: Record<string, string> = {
  "/api/v1/members/search": "name=acme&",
  "/api/v1/contacts/search": "email=ann.lee%40acme.example&"
}

/** A chamber with a key holding every scope and one row for each id of `endpoint`. */
const chamberFor = (endpoint: Endpoint) =>
  Effect.gen(function*() {
    const chamber = yield* chamberWithKey("all")
    const rows: Record<string, number> = {}
    const make = (creator: Endpoint): Effect.Effect<number, never, HttpClient.HttpClient> =>
      Effect.gen(function*() {
        const body = yield* withReferences(creator.body, make)
        const created = yield* call(creator.method, creator.path, { key: chamber.key, body })
        assert.strictEqual(created.status, 201, `${creator.label} with its example: ${JSON.stringify(created.body)}`)
        return createdId(created.body)
      })
    for (const id of endpoint.ids) rows[id] = yield* (madeByEvent[id]?.(chamber.key, rows) ?? make(creatorOf(endpoint, id)))
    const pathWith = (ids: Record<string, string | number>) => endpoint.path.replace(/:([A-Za-z_]+)/g, (_, id: string) => String(ids[id]))
    return { ...chamber, rows, path: pathWith(rows), pathWith, make }
  })

/** The scope named in the 403 of a key without access, and every scope that alone lets a key in. */
const scopeOf = (access: Access) => (access === AnyValidKey ? undefined : scopesOf(access)[0])
const openersOf = (access: Access) => scopesOf(access)

/** The methods a path allows: its endpoints', and HEAD wherever GET is. */
const allowedOn = (path: string): ReadonlyArray<string> => {
  const methods: Array<string> = endpoints.filter((e) => e.path === path).map((e) => e.method)
  return methods.includes("GET") ? [...methods, "HEAD"] : methods
}

/** An answer's fields but those that differ from one request to the next. */
const lasting = (reply: RawReply) => {
  const { date: _date, "x-request-id": _id, ratelimit: _rateLimit, ...rest } = reply.headers
  return rest
}

/** What remains of the key's minute after the answer. */
const minuteLeft = (reply: RawReply) => Number(/^"minute";r=(\d+);/.exec(reply.headers["ratelimit"] ?? "")?.[1])

for (const rt of runtimes()) {
  describe(`every endpoint of the contract on ${rt.name}`, () => {
    layer(serverOn(rt), { timeout: 120_000 })((it) => {
      it("the contract has endpoints to check", () => {
        assert.isAtLeast(endpoints.length, 6)
      })

      it.effect("HEAD on every GET route: GET's status and fields, Content-Length included, no body; counted like a GET", () =>
        Effect.gen(function*() {
          const port = Number(new URL(yield* serverUrl).port)
          const send = (method: string, path: string, key?: string) =>
            rawExchange(port, rawRequest({ method, path, headers: key === undefined ? [] : [["Authorization", `Bearer ${key}`]] }))
          for (const endpoint of endpoints.filter((e) => e.method === "GET")) {
            const a = yield* chamberFor(endpoint)
            const get = yield* send("GET", a.path, a.key)
            const head = yield* send("HEAD", a.path, a.key)
            const again = yield* send("GET", a.path, a.key)
            assert.strictEqual(head.status, get.status, `HEAD ${a.path}: ${get.body.slice(0, 200)}`)
            assert.deepStrictEqual(lasting(head), lasting(get), `HEAD ${a.path}`)
            assert.strictEqual(head.body, "", `HEAD ${a.path}`)
            assert.deepStrictEqual([minuteLeft(get) - minuteLeft(head), minuteLeft(head) - minuteLeft(again)], [1, 1], `HEAD ${a.path} counts`)
          }
          // The routes outside the contract, without a key.
          for (const path of ["/docs", "/api/v1/openapi.json", "/healthz", "/readyz"]) {
            const get = yield* send("GET", path)
            const head = yield* send("HEAD", path)
            assert.strictEqual(get.status, 200, path)
            assert.deepStrictEqual([head.status, lasting(head), head.body], [200, lasting(get), ""], `HEAD ${path}`)
          }
        }))

      for (const endpoint of endpoints) {
        const scope = scopeOf(endpoint.access)

        it.effect(`${endpoint.label}: 401 without a key and with a revoked key`, () =>
          Effect.gen(function*() {
            const a = yield* chamberFor(endpoint)
            const revoked = yield* anotherKey(a.tenant.id, "all")
            yield* (yield* Keys).revoke(revoked.slice(0, 12)).pipe(Effect.orDie)
            for (const key of [undefined, revoked]) {
              const reply = yield* call(endpoint.method, a.path, { key, body: endpoint.body })
              assertError(reply, 401, UNAUTHENTICATED)
            }
          }))

        it.effect(
          scope === undefined
            ? `${endpoint.label}: any valid key, even one with no scope, is let in`
            : `${endpoint.label}: 403 naming ${scope} for a key with every other scope; ${openersOf(endpoint.access).join(", ")} each alone is let in`,
          () =>
            Effect.gen(function*() {
              const a = yield* chamberFor(endpoint)
              if (scope === undefined) {
                const none = yield* anotherKey(a.tenant.id, "")
                const reply = yield* call(endpoint.method, a.path, { key: none, body: endpoint.body })
                assert.strictEqual(reply.status, 200, JSON.stringify(reply.body))
                return
              }
              const openers: ReadonlyArray<string> = openersOf(endpoint.access)
              const others = yield* anotherKey(a.tenant.id, ALL_SCOPES.filter((s) => !openers.includes(s)).join(","))
              assertError(
                yield* call(endpoint.method, a.path, { key: others, body: endpoint.body }),
                403,
                { message: `This key lacks the ${scope} scope.` }
              )
              for (const opener of openers) {
                const only = yield* anotherKey(a.tenant.id, opener)
                const reply = yield* call(endpoint.method, a.path, { key: only, body: endpoint.body })
                assert.notInclude([401, 403], reply.status, `${opener}: ${JSON.stringify(reply.body)}`)
              }
            })
        )

        if (endpoint.ids.length > 0) {
          it.effect(`${endpoint.label}: 404 for another chamber's id, ids that are not positive integers and ids past every row (2^53, 2^63...)`, () =>
            Effect.gen(function*() {
              const a = yield* chamberFor(endpoint)
              const b = yield* chamberFor(endpoint)
              const read = call("GET", b.path, { key: b.key }).pipe(Effect.map((r) => [r.status, r.body]))
              const before = yield* read
              assertError(yield* call(endpoint.method, b.path, { key: a.key, body: endpoint.body }), 404, NOT_FOUND)
              for (const bad of ["abc", "0", "-1", "1.5", "1e3", "99999999999999999999", "9007199254740991", ...HUGE]) {
                const path = a.pathWith(Object.fromEntries(endpoint.ids.map((id) => [id, bad])))
                assertError(yield* call(endpoint.method, path, { key: a.key, body: endpoint.body }), 404, NOT_FOUND)
              }
              // The other chamber's row is as it was.
              assert.deepStrictEqual(yield* read, before)
            }))
        }

        if (endpoint.paged) {
          it.effect(`${endpoint.label}: a page past the last, however large (2^53, 2^63, 400 digits), is 200 with data [] and the true meta`, () =>
            Effect.gen(function*() {
              const a = yield* chamberFor(endpoint)
              const collection = endpoint.path.replace(/\/search$/, "")
              const creator = endpoints.find((e) => e.method === "POST" && e.path === collection && e.body !== undefined)
              if (creator !== undefined) yield* a.make(creator)
              const query = `${a.path}?${FILTERS[endpoint.path] ?? ""}page=`
              const first = yield* call("GET", `${query}1`, { key: a.key })
              assert.strictEqual(first.status, 200, JSON.stringify(first.body))
              const { last_page, per_page, total } = first.body.meta
              for (const page of HUGE) {
                const reply = yield* call("GET", `${query}${page}`, { key: a.key })
                assert.deepStrictEqual([reply.status, reply.body.data], [200, []], `page=${page}: ${reply.text}`)
                assert.deepInclude(reply.body.meta, { per_page, total, last_page }, `page=${page}`)
                assert.include(reply.text, `"current_page":${page},`, "current_page is the page asked, digit for digit")
              }
            }))
        }

        if (endpoint.body !== undefined) {
          it.effect(`${endpoint.label}: 422 for malformed JSON and a JSON array, 415 for another content type, 413 over 1 MiB`, () =>
            Effect.gen(function*() {
              const a = yield* chamberFor(endpoint)
              const send = (body: string, contentType?: string) =>
                call(endpoint.method, a.path, contentType === undefined ? { key: a.key, body } : { key: a.key, body, contentType })
              assertError(yield* send("{not json"), 422, {
                message: "The body must be valid JSON: expected a property name in double quotes at line 1, column 2.",
                errors: { body: ["The body must be valid JSON: expected a property name in double quotes at line 1, column 2."] }
              })
              assertError(yield* send(JSON.stringify([endpoint.body])), 422, {
                message: "The body must be a JSON object.",
                errors: { body: ["The body must be a JSON object."] }
              })
              const text = yield* send(JSON.stringify(endpoint.body), "text/plain")
              assertMessageOnly(text, 415)
              const big = yield* send(JSON.stringify({ ...(endpoint.body as object), padding: "x".repeat(1024 * 1024) }))
              assertMessageOnly(big, 413)
            }))
        }

        const samePath = endpoints.filter((e) => e.path === endpoint.path)
        if (samePath[0] === endpoint) {
          it.effect(`${endpoint.path}: 405 with Allow for every other method`, () =>
            Effect.gen(function*() {
              const a = yield* chamberFor(endpoint)
              const allowed = allowedOn(endpoint.path)
              for (const method of METHODS.filter((m) => !allowed.includes(m))) {
                for (const key of [a.key, undefined]) {
                  const reply = yield* call(method, a.path, { key })
                  assertError(reply, 405, { message: "Method not allowed." })
                  assert.sameMembers((reply.headers["allow"] ?? "").split(/,\s*/), [...allowed], `${method} ${endpoint.path}`)
                }
              }
            }))
        }
      }
    })
  })
}
