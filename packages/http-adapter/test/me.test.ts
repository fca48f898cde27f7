/**
 * GET /api/v1/me (docs/api.md "Connection check") and the published contract (the OpenAPI
 * document and the docs page) over HTTP, on every storage runtime.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { ALL_SCOPES, Keys, Tenants } from "@chamber/core"
import { runtimes } from "@chamber/pg-adapter/testing"
import { assertError, assertJson } from "./assertions.ts"
import { call, serverOn } from "./fixture.ts"

/** A chamber minted the way the developer area does it: a chamber_admin mints a key. */
const mint = (chamber: { name: string; website?: string | null }, keyName: string, scopes: string) =>
  Effect.gen(function*() {
    const tenants = yield* Tenants
    const keys = yield* Keys
    const tenant = yield* tenants.create(chamber)
    yield* tenants.addUser(tenant.id, "owner@chamber.example", "chamber_admin")
    const minted = yield* keys.mint({ tenant: tenant.id, asEmail: "owner@chamber.example", name: keyName, scopes })
    return { tenant, minted }
  }).pipe(Effect.orDie)

/** `read`: every `:read` scope but the opt-in bookings:read (docs/api.md "Authentication and scopes"). */
const READ_SCOPES = ALL_SCOPES.filter((s) => s.endsWith(":read") && s !== "bookings:read")

for (const rt of runtimes()) {
  describe(`connection check and contract over HTTP on ${rt.name}`, () => {
    layer(serverOn(rt), { timeout: 120_000 })((it) => {
      it.effect("GET /me: the chamber (chm_ id, name, website), the key (name, cck_ + 8 prefix, exact scopes, can_write) and the label", () =>
        Effect.gen(function*() {
          const { tenant, minted } = yield* mint(
            { name: "Springfield Chamber of Commerce", website: "https://springfield.example" },
            "Zapier",
            "members:read,members:write"
          )
          const reply = yield* call("GET", "/api/v1/me", { key: minted.key })
          assert.strictEqual(reply.status, 200)
          assertJson(reply)
          assert.deepStrictEqual(reply.body, {
            chamber: { id: tenant.public_id, name: "Springfield Chamber of Commerce", website: "https://springfield.example" },
            key: { name: "Zapier", prefix: minted.key.slice(0, 12), scopes: ["members:read", "members:write"], can_write: true },
            label: "Springfield Chamber of Commerce (Zapier)"
          })
          assert.match(reply.body.chamber.id, /^chm_[0-9A-Za-z]+$/)
          assert.match(reply.body.key.prefix, /^cck_[0-9A-Za-z]{8}$/)
          // The body is pinned above; the plaintext key is not echoed in a header either.
          assert.notInclude(JSON.stringify(reply.headers), minted.key)
        }))

      it.effect("GET /me: can_write is false for read-only keys and the scope list is exactly the key's", () =>
        Effect.gen(function*() {
          const read = yield* mint({ name: "Read Chamber", website: "https://read.example" }, "Reporting", "read")
          const reply = yield* call("GET", "/api/v1/me", { key: read.minted.key })
          assert.strictEqual(reply.status, 200)
          assert.deepStrictEqual(reply.body.key, { name: "Reporting", prefix: read.minted.key.slice(0, 12), scopes: READ_SCOPES, can_write: false })
          assert.strictEqual(reply.body.label, "Read Chamber (Reporting)")

          const one = yield* mint({ name: "One Scope" }, "Just members", "members:read")
          const oneReply = yield* call("GET", "/api/v1/me", { key: one.minted.key })
          assert.deepStrictEqual(oneReply.body.key.scopes, ["members:read"])
          assert.strictEqual(oneReply.body.key.can_write, false)

          const hooks = yield* mint({ name: "Hooks Only" }, "Automation", "hooks:write")
          const hooksReply = yield* call("GET", "/api/v1/me", { key: hooks.minted.key })
          assert.deepStrictEqual(hooksReply.body.key.scopes, ["hooks:write"])
          assert.strictEqual(hooksReply.body.key.can_write, true)
        }))

      it.effect("GET /me is never 403: a key with no scope, or only unrelated scopes, still gets 200", () =>
        Effect.gen(function*() {
          const none = yield* mint({ name: "No Scope Chamber", website: "https://none.example" }, "Empty", "")
          const reply = yield* call("GET", "/api/v1/me", { key: none.minted.key })
          assert.strictEqual(reply.status, 200, JSON.stringify(reply.body))
          assert.deepStrictEqual(reply.body, {
            chamber: { id: none.tenant.public_id, name: "No Scope Chamber", website: "https://none.example" },
            key: { name: "Empty", prefix: none.minted.key.slice(0, 12), scopes: [], can_write: false },
            label: "No Scope Chamber (Empty)"
          })
          // The same key is refused elsewhere.
          assertError(yield* call("GET", "/api/v1/members", { key: none.minted.key }), 403, {
            message: "This key lacks the members:read scope."
          })
          const contacts = yield* mint({ name: "Contacts Chamber" }, "CRM", "contacts:read")
          const contactsReply = yield* call("GET", "/api/v1/me", { key: contacts.minted.key })
          assert.strictEqual(contactsReply.status, 200)
          assert.deepStrictEqual(contactsReply.body.key.scopes, ["contacts:read"])
        }))

      it.effect("GET /me: a chamber without a website shows null; each key sees its own chamber", () =>
        Effect.gen(function*() {
          const a = yield* mint({ name: "No Website Chamber" }, "Key A", "members:read")
          const b = yield* mint({ name: "Other Chamber", website: "https://other.example" }, "Key B", "members:write")
          const replyA = yield* call("GET", "/api/v1/me", { key: a.minted.key })
          assert.deepStrictEqual(replyA.body.chamber, { id: a.tenant.public_id, name: "No Website Chamber", website: null })
          assert.strictEqual(replyA.body.label, "No Website Chamber (Key A)")
          const replyB = yield* call("GET", "/api/v1/me", { key: b.minted.key })
          assert.deepStrictEqual(replyB.body, {
            chamber: { id: b.tenant.public_id, name: "Other Chamber", website: "https://other.example" },
            key: { name: "Key B", prefix: b.minted.key.slice(0, 12), scopes: ["members:write"], can_write: true },
            label: "Other Chamber (Key B)"
          })
        }))

      it.effect("GET /me with a bad key: 401 {\"message\":\"Unauthenticated.\"}", () =>
        Effect.gen(function*() {
          const revoked = yield* mint({ name: "Revoked Chamber" }, "Old", "members:read")
          yield* (yield* Keys).revoke(revoked.minted.prefix).pipe(Effect.orDie)
          for (const key of [undefined, "nope", `cck_${"q".repeat(40)}`, revoked.minted.key]) {
            assertError(yield* call("GET", "/api/v1/me", key === undefined ? {} : { key }), 401, { message: "Unauthenticated." })
          }
        }))

      it.effect("the OpenAPI document at /api/v1/openapi.json lists the member paths with their methods and the bearer scheme", () =>
        Effect.gen(function*() {
          const reply = yield* call("GET", "/api/v1/openapi.json")
          assert.strictEqual(reply.status, 200)
          assertJson(reply)
          const doc = reply.body
          assert.match(doc.openapi, /^3\./)
          assert.strictEqual(doc.info.title, "Chamber Data API")
          const methods = (path: string) => Object.keys(doc.paths[path] ?? {}).filter((k) => k !== "parameters").sort()
          assert.deepStrictEqual(methods("/api/v1/members"), ["get", "post"])
          assert.deepStrictEqual(methods("/api/v1/members/search"), ["get"])
          assert.deepStrictEqual(methods("/api/v1/members/{member}"), ["get", "patch"])
          assert.deepStrictEqual(methods("/api/v1/me"), ["get"])
          assert.isDefined(doc.paths["/api/v1/members"].post.responses["201"])
          assert.isDefined(doc.paths["/api/v1/members"].post.responses["422"])
          assert.isDefined(doc.paths["/api/v1/members/{member}"].get.responses["404"])
          const schemes = Object.values(doc.components.securitySchemes ?? {}) as Array<any>
          assert.isTrue(schemes.some((s) => s.type === "http" && String(s.scheme).toLowerCase() === "bearer"), JSON.stringify(schemes))
          // The same document with a key, even one that does not authenticate.
          const viaKey = yield* call("GET", "/api/v1/openapi.json", { key: `cck_${"q".repeat(40)}` })
          assert.deepStrictEqual([viaKey.status, viaKey.body], [200, doc])
        }))

      it.effect("the docs page /docs answers 200 HTML", () =>
        Effect.gen(function*() {
          const reply = yield* call("GET", "/docs")
          assert.strictEqual(reply.status, 200)
          assert.match(reply.headers["content-type"] ?? "", /^text\/html/)
          assert.match(String(reply.body), /<html/i)
          assert.include(String(reply.body), "Chamber Data API")
        }))
    })
  })
}
