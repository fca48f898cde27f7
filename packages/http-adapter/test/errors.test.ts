/**
 * The errors of docs/api.md "Authentication and scopes" and "Errors" over HTTP, on every
 * storage runtime: who wins when several apply (401, then 403, then 404/422), and every error
 * body JSON.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { Keys } from "@chamber/core"
import { runtimes } from "@chamber/pg-adapter/testing"
import * as http from "node:http"
import { assertError, assertInvalid, assertJson, assertMessageOnly, assertSingle } from "./assertions.ts"
import { anotherKey, call, chamberWithKey, serverOn, serverUrl } from "./fixture.ts"

const UNAUTHENTICATED = { message: "Unauthenticated." }
const NOT_FOUND = { message: "Not found." }
const lacks = (scope: string) => ({ message: `This key lacks the ${scope} scope.` })

type Method = "GET" | "POST" | "PATCH" | "PUT" | "DELETE"

/** A chamber with a read-write key and one member. */
const chamberWithMember = Effect.gen(function*() {
  const chamber = yield* chamberWithKey("members:read,members:write")
  const created = yield* call("POST", "/api/v1/members", {
    key: chamber.key,
    body: { name: "Guarded Co", status: "active", city: "Springfield" }
  })
  return { ...chamber, member: assertSingle(created, 201) }
})

/** Posts `bytes` of body with chunked transfer encoding (no content-length) and reads the answer. */
const postChunked = (url: string, key: string, bytes: number) =>
  Effect.callback<{ status: number; contentType: string; body: string }>((resume) => {
    const request = http.request(`${url}/api/v1/members`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "transfer-encoding": "chunked" }
    })
    let answered = false
    request.on("response", (response) => {
      answered = true
      let body = ""
      response.setEncoding("utf8")
      response.on("data", (chunk) => (body += chunk))
      response.on("end", () =>
        resume(Effect.succeed({ status: response.statusCode ?? 0, contentType: String(response.headers["content-type"]), body })))
      response.on("error", () => resume(Effect.succeed({ status: response.statusCode ?? 0, contentType: "", body })))
    })
    request.on("error", (error) => {
      if (!answered) resume(Effect.die(error))
    })
    const chunk = Buffer.alloc(64 * 1024, "x")
    let sent = 0
    request.write(`{"name":"Chunked","status":"active","about":"`)
    const pump = () => {
      while (sent < bytes) {
        sent += chunk.length
        if (!request.write(chunk)) return void request.once("drain", pump)
      }
      request.end(`"}`)
    }
    pump()
    return Effect.sync(() => request.destroy())
  })

for (const rt of runtimes()) {
  describe(`errors over HTTP on ${rt.name}`, () => {
    layer(serverOn(rt), { timeout: 120_000 })((it) => {
      it.effect("401 is exactly {\"message\":\"Unauthenticated.\"} for every kind of bad key, on every route", () =>
        Effect.gen(function*() {
          const { tenant, key, member } = yield* chamberWithMember
          const keys = yield* Keys
          const revoked = yield* anotherKey(tenant.id, "members:read,members:write")
          assert.strictEqual((yield* call("GET", "/api/v1/me", { key: revoked })).status, 200)
          yield* keys.revoke(revoked.slice(0, 12)).pipe(Effect.orDie)

          const credentials: ReadonlyArray<readonly [string, { key?: string; headers?: Record<string, string> }]> = [
            ["no header", {}],
            ["basic scheme", { headers: { authorization: `Basic ${Buffer.from(`user:${key}`).toString("base64")}` } }],
            ["token scheme", { headers: { authorization: `Token ${key}` } }],
            ["no scheme", { headers: { authorization: key } }],
            ["empty bearer", { headers: { authorization: "Bearer " } }],
            ["bearer and spaces only", { headers: { authorization: "Bearer    " } }],
            ["no space after the scheme", { headers: { authorization: `Bearer${key}` } }],
            ["another scheme beginning with bearer", { headers: { authorization: `Bearerx ${key}` } }],
            ["garbage token", { key: "garbage" }],
            ["cck_ too short", { key: "cck_abc" }],
            ["cck_ too long", { key: `${key}x` }],
            ["well-formed unknown key", { key: `cck_${"A1b2C3d4E5".repeat(4)}` }],
            ["revoked key", { key: revoked }]
          ]
          const routes: ReadonlyArray<readonly [Method, string, unknown?]> = [
            ["GET", "/api/v1/me"],
            ["GET", "/api/v1/members"],
            ["GET", "/api/v1/members/search?name=guarded"],
            ["GET", `/api/v1/members/${member.id}`],
            ["POST", "/api/v1/members", { name: "Intruder", status: "active" }],
            ["PATCH", `/api/v1/members/${member.id}`, { city: "Hijacked" }]
          ]
          for (const [label, credential] of credentials) {
            for (const [method, path, body] of routes) {
              const reply = yield* call(method, path, { ...credential, body })
              assert.strictEqual(reply.status, 401, `${label}: ${method} ${path}`)
              assertError(reply, 401, UNAUTHENTICATED)
            }
          }
          // The scheme is matched in any case, and any number of spaces may follow it (RFC 9110, 11.1).
          for (const authorization of [`bearer ${key}`, `BEARER ${key}`, `Bearer   ${key}`]) {
            assert.strictEqual((yield* call("GET", "/api/v1/me", { headers: { authorization } })).status, 200, authorization)
          }
          // Nothing got through.
          const after = yield* call("GET", "/api/v1/members", { key })
          assert.deepStrictEqual(after.body.data, [member])
        }))

      it.effect("401 wins over bad input: a bad key with a bad body, query, id or content type is still 401", () =>
        Effect.gen(function*() {
          const { member } = yield* chamberWithMember
          const bad: ReadonlyArray<readonly [Method, string, { body?: unknown; contentType?: string }]> = [
            ["POST", "/api/v1/members", { body: { status: "bogus", phone: "x".repeat(51) } }],
            ["POST", "/api/v1/members", { body: "{not json" }],
            ["POST", "/api/v1/members", { body: "[]" }],
            ["POST", "/api/v1/members", { body: "{}", contentType: "text/plain" }],
            ["GET", "/api/v1/members?page=0", {}],
            ["GET", "/api/v1/members?status=deleted", {}],
            ["GET", "/api/v1/members/search", {}],
            ["GET", "/api/v1/members/search?email=not-an-email", {}],
            ["GET", "/api/v1/members/abc", {}],
            ["GET", "/api/v1/members/99999999", {}],
            ["PATCH", "/api/v1/members/abc", { body: { phone: "x".repeat(51) } }],
            ["PATCH", `/api/v1/members/${member.id}`, { body: "{not json" }]
          ]
          for (const key of [undefined, "garbage", `cck_${"Z".repeat(40)}`]) {
            for (const [method, path, options] of bad) {
              const reply = yield* call(method, path, key === undefined ? options : { ...options, key })
              assert.strictEqual(reply.status, 401, `${key}: ${method} ${path} ${JSON.stringify(options).slice(0, 60)}`)
              assertError(reply, 401, UNAUTHENTICATED)
            }
          }
        }))

      it.effect("403 names the missing scope, members:write or members:read, and changes nothing", () =>
        Effect.gen(function*() {
          const { tenant, key, member } = yield* chamberWithMember
          const readOnly = yield* anotherKey(tenant.id, "members:read")
          const writeOnly = yield* anotherKey(tenant.id, "members:write")
          const unrelated = yield* anotherKey(tenant.id, "contacts:read,contacts:write,hooks:write")
          const noScopes = yield* anotherKey(tenant.id, "")

          for (const k of [readOnly, unrelated, noScopes]) {
            assertError(yield* call("POST", "/api/v1/members", { key: k, body: { name: "New", status: "active" } }), 403, lacks("members:write"))
            assertError(yield* call("PATCH", `/api/v1/members/${member.id}`, { key: k, body: { city: "Changed" } }), 403, lacks("members:write"))
          }
          for (const k of [writeOnly, unrelated, noScopes]) {
            assertError(yield* call("GET", "/api/v1/members", { key: k }), 403, lacks("members:read"))
            assertError(yield* call("GET", "/api/v1/members/search?name=guarded", { key: k }), 403, lacks("members:read"))
            assertError(yield* call("GET", `/api/v1/members/${member.id}`, { key: k }), 403, lacks("members:read"))
          }
          const listed = yield* call("GET", "/api/v1/members", { key })
          assert.deepStrictEqual(listed.body.data, [member])

          // A write-only key may write without reading.
          assertSingle(yield* call("POST", "/api/v1/members", { key: writeOnly, body: { name: "Writer Co", status: "active" } }), 201)
          const patched = assertSingle(yield* call("PATCH", `/api/v1/members/${member.id}`, { key: writeOnly, body: { city: "Writeville" } }), 200)
          assert.strictEqual(patched.attributes.city, "Writeville")
        }))

      it.effect("403 comes before 422 and before 404", () =>
        Effect.gen(function*() {
          const { tenant } = yield* chamberWithMember
          const readOnly = yield* anotherKey(tenant.id, "members:read")
          const writeOnly = yield* anotherKey(tenant.id, "members:write")
          const write = lacks("members:write")
          const read = lacks("members:read")
          assertError(yield* call("POST", "/api/v1/members", { key: readOnly, body: { status: "bogus" } }), 403, write)
          assertError(yield* call("POST", "/api/v1/members", { key: readOnly, body: {} }), 403, write)
          assertError(yield* call("POST", "/api/v1/members", { key: readOnly, body: "{not json" }), 403, write)
          assertError(yield* call("POST", "/api/v1/members", { key: readOnly, body: "{}", contentType: "text/plain" }), 403, write)
          assertError(yield* call("PATCH", "/api/v1/members/abc", { key: readOnly, body: { phone: "x".repeat(51) } }), 403, write)
          assertError(yield* call("PATCH", "/api/v1/members/99999999", { key: readOnly, body: { city: "x" } }), 403, write)
          assertError(yield* call("GET", "/api/v1/members?page=0", { key: writeOnly }), 403, read)
          assertError(yield* call("GET", "/api/v1/members?status=deleted", { key: writeOnly }), 403, read)
          assertError(yield* call("GET", "/api/v1/members/search", { key: writeOnly }), 403, read)
          assertError(yield* call("GET", "/api/v1/members/search?email=nope", { key: writeOnly }), 403, read)
          assertError(yield* call("GET", "/api/v1/members/abc", { key: writeOnly }), 403, read)
          assertError(yield* call("GET", "/api/v1/members/99999999", { key: writeOnly }), 403, read)
        }))

      it.effect("404 {\"message\":\"Not found.\"} for a missing id and for ids that are not positive integers, on GET and PATCH", () =>
        Effect.gen(function*() {
          const { key, member } = yield* chamberWithMember
          const ids = ["99999999", String(member.id + 1000), "abc", "0", "-1", "1.5", "99999999999999999999", "1e3", "%20", "0x1"]
          for (const id of ids) {
            assertError(yield* call("GET", `/api/v1/members/${id}`, { key }), 404, NOT_FOUND)
            assertError(yield* call("PATCH", `/api/v1/members/${id}`, { key, body: { city: "Nowhere" } }), 404, NOT_FOUND)
          }
          assert.deepStrictEqual(assertSingle(yield* call("GET", `/api/v1/members/${member.id}`, { key }), 200), member)
        }))

      it.effect("another chamber's member is a 404 on GET and PATCH, is left unchanged, and never listed or found", () =>
        Effect.gen(function*() {
          const a = yield* chamberWithMember
          const b = yield* chamberWithMember
          assertError(yield* call("GET", `/api/v1/members/${b.member.id}`, { key: a.key }), 404, NOT_FOUND)
          const patch = yield* call("PATCH", `/api/v1/members/${b.member.id}`, {
            key: a.key,
            body: { name: "Hijacked", city: "Elsewhere", slug: "hijacked" }
          })
          assertError(patch, 404, NOT_FOUND)
          assert.deepStrictEqual(assertSingle(yield* call("GET", `/api/v1/members/${b.member.id}`, { key: b.key }), 200), b.member)
          const listed = yield* call("GET", "/api/v1/members", { key: a.key })
          assert.deepStrictEqual(listed.body.data.map((m: any) => m.id), [a.member.id])
          const found = yield* call("GET", "/api/v1/members/search?name=guarded", { key: a.key })
          assert.deepStrictEqual(found.body.data.map((m: any) => m.id), [a.member.id])
        }))

      it.effect("405 {message} for another method on a known path; 404 {message} for an unknown path", () =>
        Effect.gen(function*() {
          const { key, member } = yield* chamberWithMember
          const wrong: ReadonlyArray<readonly [Method, string, ReadonlyArray<string>]> = [
            ["DELETE", `/api/v1/members/${member.id}`, ["GET", "PATCH"]],
            ["PUT", `/api/v1/members/${member.id}`, ["GET", "PATCH"]],
            ["POST", `/api/v1/members/${member.id}`, ["GET", "PATCH"]],
            ["DELETE", "/api/v1/members", ["GET", "POST"]],
            ["PUT", "/api/v1/members", ["GET", "POST"]],
            ["PATCH", "/api/v1/members", ["GET", "POST"]],
            ["POST", "/api/v1/members/search", ["GET"]],
            ["POST", "/api/v1/me", ["GET"]],
            ["DELETE", "/api/v1/me", ["GET"]]
          ]
          for (const [method, path, allowed] of wrong) {
            for (const k of [key, undefined]) {
              const reply = yield* call(method, path, k === undefined ? {} : { key: k })
              assert.strictEqual(reply.status, 405, `${method} ${path}`)
              assertError(reply, 405, { message: "Method not allowed." })
              const allow = (reply.headers["allow"] ?? "").split(/,\s*/)
              for (const m of allowed) assert.include(allow, m, `Allow of ${method} ${path}`)
            }
          }
          for (const path of ["/api/v1/nope", "/api/v1/members/1/extra", "/api/v2/members", "/api/v1", "/", "/api/v1/member"]) {
            assertError(yield* call("GET", path, { key }), 404, NOT_FOUND)
            assertError(yield* call("POST", path, { key, body: { name: "x", status: "active" } }), 404, NOT_FOUND)
          }
        }))

      it.effect("415 {message} for a body that is not JSON; application/json with a charset is fine", () =>
        Effect.gen(function*() {
          const { key, member } = yield* chamberWithMember
          const body = JSON.stringify({ name: "Plain Co", status: "active" })
          for (const contentType of ["text/plain", "application/x-www-form-urlencoded", "application/xml"]) {
            assertMessageOnly(yield* call("POST", "/api/v1/members", { key, body, contentType }), 415)
            assertMessageOnly(yield* call("PATCH", `/api/v1/members/${member.id}`, { key, body: '{"city":"X"}', contentType }), 415)
          }
          assert.deepStrictEqual((yield* call("GET", "/api/v1/members", { key })).body.data, [member])
          assertSingle(yield* call("POST", "/api/v1/members", { key, body, contentType: "application/json; charset=utf-8" }), 201)
        }))

      it.effect("413 {message} for a body over 1 MiB, with a content-length or chunked", () =>
        Effect.gen(function*() {
          const { key, member } = yield* chamberWithMember
          const big = { name: "Big Co", status: "active", about: "x".repeat(1024 * 1024) }
          assertMessageOnly(yield* call("POST", "/api/v1/members", { key, body: big }), 413)
          assertMessageOnly(yield* call("PATCH", `/api/v1/members/${member.id}`, { key, body: { about: "y".repeat(1100 * 1024) } }), 413)
          const chunked = yield* postChunked(yield* serverUrl, key, 1100 * 1024)
          assert.strictEqual(chunked.status, 413, chunked.body.slice(0, 200))
          assert.match(chunked.contentType, /^application\/json/)
          assert.deepStrictEqual(Object.keys(JSON.parse(chunked.body)), ["message"])
          assert.deepStrictEqual((yield* call("GET", "/api/v1/members", { key })).body.data, [member])
          // Just under the limit is accepted (and then refused for its own reasons: about is 5000 at most).
          const under = yield* call("POST", "/api/v1/members", { key, body: { name: "Under", status: "active", about: "x".repeat(1000 * 1024) } })
          assertInvalid(under, ["about"])
        }))

      it.effect("422 with errors.body for malformed JSON and for JSON that is not an object", () =>
        Effect.gen(function*() {
          const { key, member } = yield* chamberWithMember
          const malformed = { message: "The body must be valid JSON.", errors: { body: ["The body must be valid JSON."] } }
          const notObject = { message: "The body must be a JSON object.", errors: { body: ["The body must be a JSON object."] } }
          for (const text of ["{not json", '{"name": "x",}', "{\"name\": \"unterminated", "nul"]) {
            assertError(yield* call("POST", "/api/v1/members", { key, body: text }), 422, malformed)
            assertError(yield* call("PATCH", `/api/v1/members/${member.id}`, { key, body: text }), 422, malformed)
          }
          for (const text of ["[]", '[{"name":"x","status":"active"}]', "null", "42", '"text"', "true"]) {
            assertError(yield* call("POST", "/api/v1/members", { key, body: text }), 422, notObject)
            assertError(yield* call("PATCH", `/api/v1/members/${member.id}`, { key, body: text }), 422, notObject)
          }
          assert.deepStrictEqual((yield* call("GET", "/api/v1/members", { key })).body.data, [member])
        }))

      it.effect("bad input never answers 500: NUL characters, huge pages, odd queries", () =>
        Effect.gen(function*() {
          const { key, member } = yield* chamberWithMember
          assertInvalid(yield* call("POST", "/api/v1/members", { key, body: { name: "a\u0000b", status: "active" } }), ["name"])
          assertInvalid(yield* call("POST", "/api/v1/members", { key, body: { name: "ok", status: "active", slogan: "x\u0000" } }), ["slogan"])
          assertInvalid(
            yield* call("POST", "/api/v1/members", { key, body: { name: "ok", status: "active", secondary_industries: ["\u0000"] } }),
            ["secondary_industries.0"]
          )
          assertInvalid(yield* call("PATCH", `/api/v1/members/${member.id}`, { key, body: { city: "\u0000" } }), ["city"])
          assertInvalid(yield* call("GET", "/api/v1/members/search?name=%00", { key }), ["name"])
          assertInvalid(yield* call("GET", "/api/v1/members/search?email=a%00%40b.co", { key }), ["email"])
          const odd: ReadonlyArray<readonly [string, number]> = [
            ["/api/v1/members?page=9007199254740991", 200],
            ["/api/v1/members?page=99999999999999999999", 200],
            ["/api/v1/members?page=1e400", 422],
            ["/api/v1/members?page=1&page=2", 422],
            ["/api/v1/members?sort=%00", 200],
            [`/api/v1/members?sort=${encodeURIComponent("name; DROP TABLE members")}`, 200],
            ["/api/v1/members/search?name=%27%22%3B--", 200],
            [`/api/v1/members/search?name=${"a".repeat(5000)}`, 200],
            ["/api/v1/members/%00", 404]
          ]
          for (const [path, status] of odd) {
            const reply = yield* call("GET", path, { key })
            assert.strictEqual(reply.status, status, `${path.slice(0, 80)} ${JSON.stringify(reply.body).slice(0, 200)}`)
            assertJson(reply)
          }
          assert.deepStrictEqual(assertSingle(yield* call("GET", `/api/v1/members/${member.id}`, { key }), 200), member)
        }))
    })
  })
}
