/**
 * What a hostile client sends, one case of each kind, over a raw socket on every storage
 * runtime: Node's parser errors, odd paths, bytes that are not UTF-8, repeated parameters and
 * headers, odd numbers. Every answer is JSON `{message}` (or the 422 shape) with the status
 * docs/api.md "Errors" gives, and nothing is served or changed that should not be.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { runtimes } from "@chamber/pg-adapter/testing"
import { assertSingle } from "./assertions.ts"
import { nodeServerTest } from "../src/index.ts"
import { call, chamberWithKey, serverListeningOn, serverOn, serverUrl } from "./fixture.ts"
import { parse, rawExchange, type RawReply, rawRequest, rawTrickle } from "./raw.ts"

const port = Effect.map(serverUrl, (url) => Number(new URL(url).port))

const send = (options: Parameters<typeof rawRequest>[0]) =>
  Effect.flatMap(port, (p) => rawExchange(p, rawRequest(options)))

/** The answer is `status` with exactly this JSON body. */
const expectJson = (reply: RawReply, status: number, body: unknown, label: string) => {
  assert.strictEqual(reply.status, status, `${label}: ${reply.body.slice(0, 200)}`)
  assert.match(reply.headers["content-type"] ?? "", /^application\/json/, label)
  assert.deepStrictEqual(JSON.parse(reply.body), body, label)
}

const BAD_REQUEST = { message: "Bad request." }
const TOO_SLOW = { message: "The request took too long to arrive." }
const NOT_FOUND = { message: "Not found." }
const notUtf8 = { message: "The body must be valid UTF-8 text.", errors: { body: ["The body must be valid UTF-8 text."] } }

/** A chamber with a read-write key and one member. */
const chamberWithMember = Effect.gen(function*() {
  const chamber = yield* chamberWithKey("members:read,members:write")
  const created = yield* call("POST", "/api/v1/members", { key: chamber.key, body: { name: "Target Co", status: "active" } })
  return { ...chamber, member: assertSingle(created, 201), auth: ["Authorization", `Bearer ${chamber.key}`] as const }
})

for (const rt of runtimes()) {
  describe(`hostile requests on ${rt.name}`, () => {
    layer(serverOn(rt), { timeout: 120_000 })((it) => {
      it.effect("Node's parser errors answer JSON: unknown method 405, big headers or URL 431, Expect 417, bad bytes and framing 400", () =>
        Effect.gen(function*() {
          const { auth } = yield* chamberWithMember
          expectJson(yield* send({ method: "FOO", path: "/api/v1/members", headers: [auth] }), 405, { message: "Method not allowed." }, "FOO")
          expectJson(yield* send({ method: "GET", path: "/api/v1/members", headers: [["Authorization", `Bearer ${"x".repeat(20_000)}`]] }), 431, {
            message: "The request's headers are larger than 16 KiB."
          }, "20 KB Authorization")
          expectJson(yield* send({ method: "GET", path: `/api/v1/members?name=${"a".repeat(100_000)}`, headers: [auth] }), 431, {
            message: "The request's headers are larger than 16 KiB."
          }, "100 KB URL")
          expectJson(yield* send({ method: "GET", path: "/api/v1/members", headers: [auth, ["Expect", "bogus"]] }), 417, {
            message: "Only `Expect: 100-continue` is supported."
          }, "Expect: bogus")
          for (const bytes of [[0x00], [0xff], [0xff, 0xfe]]) {
            const path = Buffer.concat([Buffer.from("/api/v1/members/"), Buffer.from(bytes)])
            expectJson(yield* send({ method: "GET", path, headers: [auth] }), 400, BAD_REQUEST, `path with ${bytes}`)
          }
          const body = JSON.stringify({ name: "Smuggled", status: "active" })
          expectJson(
            yield* send({
              method: "POST",
              path: "/api/v1/members",
              headers: [auth, ["Content-Type", "application/json"], ["Content-Length", String(body.length)], ["Transfer-Encoding", "chunked"]],
              body: `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`
            }),
            400,
            BAD_REQUEST,
            "Content-Length and Transfer-Encoding"
          )
          expectJson(
            yield* send({
              method: "POST",
              path: "/api/v1/members",
              headers: [auth, ["Content-Type", "application/json"], ["Transfer-Encoding", "chunked"]],
              body: `zz\r\n${body}\r\n0\r\n\r\n`
            }),
            400,
            BAD_REQUEST,
            "bad chunk size"
          )
          // After an interim 100 Continue, a broken body still gets its final answer.
          expectJson(
            yield* send({
              method: "POST",
              path: "/api/v1/members",
              headers: [auth, ["Content-Type", "application/json"], ["Expect", "100-continue"], ["Transfer-Encoding", "chunked"]],
              body: `4\r\n${body}\r\n0\r\n\r\n`
            }),
            400,
            BAD_REQUEST,
            "a chunk longer than its size, after 100 Continue"
          )
        }))

      it.effect("an HTTP/1.1 request without Host is a 400, CONNECT a 405: JSON both, and the connection closes", () =>
        Effect.gen(function*() {
          const { auth } = yield* chamberWithMember
          const p = yield* port
          const noHost = yield* rawExchange(p, `GET /api/v1/me HTTP/1.1\r\n${auth.join(": ")}\r\n\r\n`)
          expectJson(noHost, 400, BAD_REQUEST, "no Host")
          assert.strictEqual(noHost.headers["connection"], "close")
          expectJson(yield* rawExchange(p, "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n"), 405, {
            message: "Method not allowed."
          }, "CONNECT")
          // HTTP/1.0 has no Host to require.
          const old = yield* rawExchange(p, `GET /api/v1/me HTTP/1.0\r\n${auth.join(": ")}\r\n\r\n`)
          assert.strictEqual(old.status, 200, old.body)
        }))

      it.effect("only canonical paths route: odd spellings of a path are 404 for every method, and nothing is served or changed", () =>
        Effect.gen(function*() {
          const { key, member, auth } = yield* chamberWithMember
          const odd = [
            `/api/v1/members/${member.id};x=1`,
            "/API/V1/MEMBERS",
            "/api/v1//members",
            "/api/v1/%6Dembers",
            `/api/v1/members/%3${String(member.id).slice(0, 1)}`,
            "/api/v1/members/",
            `/api/v1/members/${member.id}/`,
            "/API/v1/me"
          ]
          for (const path of odd) {
            for (const method of ["GET", "PATCH", "PUT", "POST", "DELETE"]) {
              const body = method === "PATCH" || method === "POST" ? JSON.stringify({ name: "Changed", status: "active" }) : undefined
              const headers = body === undefined ? [auth] : [auth, ["Content-Type", "application/json"] as const]
              expectJson(yield* send({ method, path, headers, ...(body === undefined ? {} : { body }) }), 404, NOT_FOUND, `${method} ${path}`)
            }
          }
          // SEARCH is not search: an id that is not an integer, so no member.
          expectJson(yield* send({ method: "GET", path: "/api/v1/members/SEARCH?name=x", headers: [auth] }), 404, NOT_FOUND, "SEARCH")
          const after = yield* call("GET", "/api/v1/members", { key })
          assert.deepStrictEqual(after.body.data, [member])
        }))

      it.effect("a body that is not UTF-8 is a 422 on body, whatever charset it claims; a lone surrogate is a 422 on its field", () =>
        Effect.gen(function*() {
          const { key, member, auth } = yield* chamberWithMember
          const json = (text: string, bytes: ReadonlyArray<number>) =>
            Buffer.concat([Buffer.from(`{"name":"${text}`), Buffer.from(bytes), Buffer.from(`","status":"active"}`)])
          const bodies: ReadonlyArray<readonly [string, Buffer, string]> = [
            ["invalid bytes", json("Bad", [0xff, 0xfe]), "application/json"],
            ["overlong /", json("Over", [0xc0, 0xaf]), "application/json"],
            ["CESU-8 surrogate pair", json("Cesu", [0xed, 0xa0, 0x80, 0xed, 0xb0, 0x80]), "application/json"],
            ["latin1 é", json("Caf", [0xe9]), "application/json; charset=latin1"]
          ]
          for (const [label, body, contentType] of bodies) {
            expectJson(yield* send({ method: "POST", path: "/api/v1/members", headers: [auth, ["Content-Type", contentType]], body }), 422, notUtf8, label)
            expectJson(
              yield* send({ method: "PATCH", path: `/api/v1/members/${member.id}`, headers: [auth, ["Content-Type", contentType]], body }),
              422,
              notUtf8,
              `PATCH ${label}`
            )
          }
          const surrogate = yield* call("POST", "/api/v1/members", { key, body: '{"name":"Lone \\ud800","status":"active"}' })
          assert.deepStrictEqual([surrogate.status, surrogate.body], [422, {
            message: "The name field must be valid Unicode text.",
            errors: { name: ["The name field must be valid Unicode text."] }
          }])
          assert.deepStrictEqual((yield* call("GET", "/api/v1/members", { key })).body.data, [member])
          // Real UTF-8 (é, emoji) is stored as sent.
          const fine = assertSingle(yield* call("POST", "/api/v1/members", { key, body: { name: "Café 😀", status: "active" } }), 201)
          assert.strictEqual(fine.attributes.name, "Café 😀")
        }))

      it.effect("a repeated sort means the default order; page takes plain digits only, once", () =>
        Effect.gen(function*() {
          const { key } = yield* chamberWithMember
          yield* call("POST", "/api/v1/members", { key, body: { name: "Alpha Co", status: "active" } })
          const names = (path: string) =>
            call("GET", path, { key }).pipe(Effect.map((r) => [r.status, r.body.data?.map((m: { attributes: { name: string } }) => m.attributes.name)]))
          assert.deepStrictEqual(yield* names("/api/v1/members?sort=-name&sort=name"), [200, ["Alpha Co", "Target Co"]])
          assert.deepStrictEqual(yield* names("/api/v1/members?sort=-name&sort=-name"), [200, ["Alpha Co", "Target Co"]])
          assert.deepStrictEqual(yield* names("/api/v1/members?sort=-name"), [200, ["Target Co", "Alpha Co"]])
          const pageError = { message: "The page field must be an integer of at least 1.", errors: { page: ["The page field must be an integer of at least 1."] } }
          for (const page of ["1e3", "%2B1", "01", "1.0", "1&page=1", "", "0x1", "%201"]) {
            const reply = yield* call("GET", `/api/v1/members?page=${page}`, { key })
            assert.deepStrictEqual([reply.status, reply.body], [422, pageError], `page=${page}`)
          }
          assert.deepStrictEqual((yield* call("GET", "/api/v1/members?page=2", { key })).body.meta.current_page, 2)
        }))

      it.effect("two Authorization headers are a 401, whichever comes first", () =>
        Effect.gen(function*() {
          const { auth } = yield* chamberWithMember
          const bad = ["Authorization", "Bearer cck_nope"] as const
          for (const headers of [[auth, bad], [bad, auth], [auth, auth]]) {
            expectJson(yield* send({ method: "GET", path: "/api/v1/me", headers }), 401, { message: "Unauthenticated." }, headers.map(([, v]) => v.slice(0, 12)).join(" + "))
          }
          assert.strictEqual((yield* send({ method: "GET", path: "/api/v1/me", headers: [auth] })).status, 200)
        }))

      it.effect("200,000 secondary industries are a quick 422 on secondary_industries (at most 50)", () =>
        Effect.gen(function*() {
          const { key, member } = yield* chamberWithMember
          const many = Array.from({ length: 200_000 }, () => "x")
          for (const [method, path] of [["POST", "/api/v1/members"], ["PATCH", `/api/v1/members/${member.id}`]] as const) {
            const reply = yield* call(method, path, { key, body: { name: "Many Co", status: "active", secondary_industries: many } })
            assert.deepStrictEqual([reply.status, reply.body.errors], [422, {
              secondary_industries: ["The secondary industries field must not have more than 50 items."]
            }], method)
          }
        }))
    })
  })

  describe(`slow clients on ${rt.name}`, () => {
    layer(serverListeningOn(nodeServerTest({ requestTimeout: "1 second" }), rt), { timeout: 120_000 })((it) => {
      it.effect("a request still arriving when the request timeout (here 1 s) passes is a 408 JSON and its connection closes; nothing is written", () =>
        Effect.gen(function*() {
          const { key, auth } = yield* chamberWithMember
          const p = yield* port
          const body = JSON.stringify({ name: "Slow Co", status: "active" })
          const post = `POST /api/v1/members HTTP/1.1\r\nHost: x\r\n${auth.join(": ")}\r\nContent-Type: application/json\r\n` +
            `Content-Length: ${body.length}\r\n\r\n`
          const me = `GET /api/v1/me HTTP/1.1\r\nHost: x\r\n${auth.join(": ")}\r\n\r\n`
          const cases = [
            { label: "a body a byte every 200 ms", head: post, trickle: body, answers: 1 },
            { label: "the same on a keep-alive connection, after an answered request", head: me + post, trickle: body, answers: 2 },
            { label: "headers a byte every 200 ms", head: "GET /api/v1/me HTTP/1.1\r\nHost: x\r\n", trickle: `X-Slow: ${"a".repeat(60)}`, answers: 1 }
          ]
          for (const { label, head, trickle, answers } of cases) {
            const { received, closedAfterMs } = yield* rawTrickle(p, head, trickle, 200)
            const text = received.toString("latin1")
            const starts = [...text.matchAll(/HTTP\/1\.1 \d{3} /g)].map((m) => m.index)
            assert.lengthOf(starts, answers, `${label}: ${text}`)
            const last = parse(received.subarray(starts.at(-1)))
            expectJson(last, 408, TOO_SLOW, label)
            assert.strictEqual(last.headers["connection"], "close", label)
            assert.isAtLeast(closedAfterMs, 900, `${label}: not before the timeout`)
            assert.isBelow(closedAfterMs, 10_000, `${label}: closed soon after the timeout`)
          }
          const names = (yield* call("GET", "/api/v1/members", { key })).body.data.map((m: { attributes: { name: string } }) => m.attributes.name)
          assert.deepStrictEqual(names, ["Target Co"])
        }))
    })
  })
}
