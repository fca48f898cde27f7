/**
 * What every answer says beyond its body (docs/api.md "Response headers"), over a socket on every
 * storage runtime: `X-Content-Type-Options: nosniff` on every answer, Node's own included;
 * `Cache-Control: no-store` on every answer of the API, whatever its status; and the reference
 * page's Content-Security-Policy, which lets in the page's own scripts and nothing from elsewhere.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { createHash } from "node:crypto"
import { runtimes } from "@chamber/pg-adapter/testing"
import { assertSingle } from "./assertions.ts"
import { call, chamberWithKey, type Reply, serverOn, serverUrl } from "./fixture.ts"
import { rawExchange, rawRequest } from "./raw.ts"

/** A Content-Security-Policy's directives, each with its sources. */
const directives = (policy: string) =>
  Object.fromEntries(policy.split(";").map((d) => d.trim().split(/\s+/)).filter((d) => d[0] !== "").map(([name, ...sources]) => [name!, sources]))

for (const rt of runtimes()) {
  describe(`response headers on ${rt.name}`, () => {
    layer(serverOn(rt), { timeout: 120_000 })((it) => {
      it.effect("every answer is nosniff; every answer of the API, errors included, is no-store", () =>
        Effect.gen(function*() {
          const { key } = yield* chamberWithKey("members:read,members:write")
          const member = assertSingle(yield* call("POST", "/api/v1/members", { key, body: { name: "Acme", status: "active" } }), 201)
          const answers: ReadonlyArray<readonly [string, number, Reply]> = [
            ["list", 200, yield* call("GET", "/api/v1/members", { key })],
            ["one", 200, yield* call("GET", `/api/v1/members/${member.id}`, { key })],
            ["me", 200, yield* call("GET", "/api/v1/me", { key })],
            ["created", 201, yield* call("POST", "/api/v1/members", { key, body: { name: "Beta", status: "active" } })],
            ["invalid", 422, yield* call("POST", "/api/v1/members", { key, body: { status: "nope" } })],
            ["no key", 401, yield* call("GET", "/api/v1/members")],
            ["no scope", 403, yield* call("GET", "/api/v1/invoices", { key })],
            ["no row", 404, yield* call("GET", "/api/v1/members/999999", { key })],
            ["no path", 404, yield* call("GET", "/api/v1/nope", { key })],
            ["wrong method", 405, yield* call("DELETE", "/api/v1/members", { key })],
            ["health", 200, yield* call("GET", "/healthz")]
          ]
          for (const [label, status, reply] of answers) {
            assert.strictEqual(reply.status, status, `${label}: ${JSON.stringify(reply.body)}`)
            assert.strictEqual(reply.headers["x-content-type-options"], "nosniff", label)
            assert.strictEqual(reply.headers["cache-control"], "no-store", label)
          }
          // Node's own answers too.
          const port = Number(new URL(yield* serverUrl).port)
          const foo = yield* rawExchange(port, rawRequest({ method: "FOO", path: "/api/v1/members" }))
          assert.deepStrictEqual([foo.status, foo.headers["x-content-type-options"], foo.headers["cache-control"]], [405, "nosniff", "no-store"])
          // The documentation is revalidated by its ETag instead.
          for (const path of ["/docs", "/api/v1/openapi.json"]) {
            const doc = yield* call("GET", path)
            assert.deepStrictEqual([doc.status, doc.headers["x-content-type-options"], doc.headers["cache-control"]], [
              200,
              "nosniff",
              "public, max-age=0, must-revalidate"
            ], path)
          }
        }))

      it.effect("a page of more than 16 KiB of JSON (sent as bytes) and a small answer both say application/json with their exact UTF-8 length", () =>
        Effect.gen(function*() {
          const { key } = yield* chamberWithKey("members:read,members:write")
          // Names with two- to four-byte characters, so the byte length differs from the text length.
          for (let i = 0; i < 40; i++) {
            assertSingle(yield* call("POST", "/api/v1/members", { key, body: { name: `Café Zürich ☕ 🐝 ${i} ${"ü".repeat(200)}`, status: "active" } }), 201)
          }
          const port = Number(new URL(yield* serverUrl).port)
          const auth = [["authorization", `Bearer ${key}`]] as const
          const page = yield* rawExchange(port, rawRequest({ method: "GET", path: "/api/v1/members", headers: auth }))
          const me = yield* rawExchange(port, rawRequest({ method: "GET", path: "/api/v1/me", headers: auth }))
          assert.isAbove(page.body.length, 16 * 1024)
          for (const [label, reply] of [["page", page], ["me", me]] as const) {
            assert.strictEqual(reply.status, 200, label)
            assert.strictEqual(reply.headers["content-type"], "application/json", label)
            assert.strictEqual(Number(reply.headers["content-length"]), Buffer.byteLength(reply.body, "utf8"), label)
          }
          const names = (JSON.parse(page.body) as { data: ReadonlyArray<{ attributes: { name: string } }> }).data.map((m) => m.attributes.name)
          assert.strictEqual(names.length, 40)
          assert.isTrue(names.every((name) => name.startsWith("Café Zürich ☕ 🐝 ")))
        }))

      it.effect("/docs has a Content-Security-Policy letting in its own inline scripts by hash, and nothing from another origin", () =>
        Effect.gen(function*() {
          const page = yield* call("GET", "/docs", { headers: { "accept-encoding": "identity" } })
          assert.strictEqual(page.status, 200)
          const policy = directives(page.headers["content-security-policy"] ?? "")
          const html: string = page.body
          const scripts = [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)]
          assert.isAtLeast(scripts.length, 2, "the viewer and its start")
          assert.deepStrictEqual(scripts.map((s) => s[1]), scripts.map(() => ""), "every script is inline: none is loaded from elsewhere")
          const hashes = scripts.map((s) => `'sha256-${createHash("sha256").update(s[2]!).digest("base64")}'`)
          assert.sameMembers(policy["script-src"] ?? [], hashes, "exactly the page's scripts may run: no 'unsafe-inline', no eval, no host")
          assert.deepStrictEqual(policy["default-src"], ["'none'"])
          assert.deepStrictEqual(policy["connect-src"], ["'self'"], "the page's test requests go to this server")
          assert.includeMembers(policy["style-src"] ?? [], ["'self'"])
          assert.notInclude(JSON.stringify(policy), "http", "no other origin is named")
          for (const directive of ["frame-ancestors", "base-uri", "form-action"]) assert.deepStrictEqual(policy[directive], ["'none'"], directive)
          // Outside its scripts the page loads nothing (no link, image or frame), and the viewer is
          // told not to fetch its default fonts from their host.
          const markup = html.replace(/<script[^>]*>[\s\S]*?<\/script>/g, "")
          assert.notMatch(markup, /<(link|img|iframe|object|embed|style)\b/i)
          assert.include(scripts.at(-1)![2]!, `"withDefaultFonts":false`)
          // The same policy whichever way the page is sent.
          const brotli = yield* call("GET", "/docs", { headers: { "accept-encoding": "br" } })
          assert.strictEqual(brotli.headers["content-encoding"], "br")
          const etag = brotli.headers["etag"]!
          const unchanged = yield* call("GET", "/docs", { headers: { "if-none-match": etag } })
          assert.strictEqual(unchanged.status, 304)
          for (const reply of [brotli, unchanged]) {
            assert.strictEqual(reply.headers["content-security-policy"], page.headers["content-security-policy"])
          }
        }))
    })
  })
}
