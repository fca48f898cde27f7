/**
 * The typed client (`makeClient`) against the real server over a real socket, on every storage
 * runtime: the calls an embedder makes, and the server's errors as the contract's typed errors.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { runtimes } from "@chamber/pg-adapter/testing"
import { type ChamberClient, FetchClientLive, Forbidden, makeClient, NotFoundError, Unauthenticated, ValidationError } from "@chamber/http-adapter/contract"
import { anotherKey, chamberWithKey, serverOn, serverUrl } from "./fixture.ts"

/** A client for the test server, on its own fetch HttpClient (not the fixture's pre-pointed one). */
const clientFor = (key: string) =>
  Effect.gen(function*() {
    const client: ChamberClient = yield* makeClient(yield* serverUrl, key)
    return client
  }).pipe(Effect.provide(FetchClientLive))

for (const rt of runtimes()) {
  describe(`typed client over HTTP on ${rt.name}`, () => {
    layer(serverOn(rt), { timeout: 120_000 })((it) => {
      it.effect("create, get, list, search and update a member", () =>
        Effect.gen(function*() {
          const { key } = yield* chamberWithKey("members:read,members:write")
          const client = yield* clientFor(key)

          const created = yield* client.members.create({
            payload: { name: "Typed Client Co", status: "active", city: "Springfield", secondary_industries: ["Software"] }
          })
          assert.isTrue(created.data.id > 0)
          assert.strictEqual(created.data.attributes.name, "Typed Client Co")
          assert.strictEqual(created.data.attributes.slug, "typed-client-co")
          assert.deepStrictEqual(created.data.attributes.secondary_industries, ["Software"])
          const [, response] = yield* client.members.create({
            payload: { name: "Second Typed Co", status: "pending" },
            responseMode: "decoded-and-response"
          })
          assert.strictEqual(response.status, 201)

          const got = yield* client.members.get({ params: { member: created.data.id } })
          assert.deepStrictEqual(got.data, created.data)

          const list = yield* client.members.list({ query: {} })
          assert.deepStrictEqual(list.meta, { current_page: 1, per_page: 100, total: 2, last_page: 1 })
          assert.deepStrictEqual(list.data.map((m) => m.attributes.name), ["Second Typed Co", "Typed Client Co"])
          const pending = yield* client.members.list({ query: { status: "pending", sort: "-name", page: 1n } })
          assert.deepStrictEqual(pending.data.map((m) => m.attributes.name), ["Second Typed Co"])

          const found = yield* client.members.search({ query: { name: "client" } })
          assert.deepStrictEqual(found.data.map((m) => m.id), [created.data.id])

          const updated = yield* client.members.update({
            params: { member: created.data.id },
            payload: { city: "Shelbyville", employee_count: 12 }
          })
          assert.deepStrictEqual(updated.data.attributes, { ...created.data.attributes, city: "Shelbyville", employee_count: 12 })
          assert.deepStrictEqual((yield* client.members.get({ params: { member: created.data.id } })).data, updated.data)

          const me = yield* client.me.me()
          assert.deepStrictEqual(me.key.scopes, ["members:read", "members:write"])
          assert.strictEqual(me.key.can_write, true)
        }))

      it.effect("a 404 comes back as the typed NotFound error", () =>
        Effect.gen(function*() {
          const { key } = yield* chamberWithKey("members:read,members:write")
          const client = yield* clientFor(key)
          for (const id of [999999, 0]) {
            const error = yield* client.members.get({ params: { member: id } }).pipe(Effect.flip)
            assert.instanceOf(error, NotFoundError)
            assert.strictEqual((error as NotFoundError).message, "Not found.")
          }
          const patch = yield* client.members.update({ params: { member: 999999 }, payload: { city: "x" } }).pipe(Effect.flip)
          assert.instanceOf(patch, NotFoundError)
        }))

      it.effect("401, 403 and a server-side 422 come back as the typed errors", () =>
        Effect.gen(function*() {
          const { tenant, key } = yield* chamberWithKey("members:read,members:write")
          const bad = yield* clientFor(`cck_${"x".repeat(40)}`)
          const unauthenticated = yield* bad.members.list({ query: {} }).pipe(Effect.flip)
          assert.instanceOf(unauthenticated, Unauthenticated)
          assert.strictEqual((unauthenticated as Unauthenticated).message, "Unauthenticated.")

          const reader = yield* clientFor(yield* anotherKey(tenant.id, "members:read"))
          const forbidden = yield* reader.members.create({ payload: { name: "Nope", status: "active" } }).pipe(Effect.flip)
          assert.instanceOf(forbidden, Forbidden)
          assert.strictEqual((forbidden as Forbidden).message, "This key lacks the members:write scope.")

          const client = yield* clientFor(key)
          yield* client.members.create({ payload: { name: "Taken", status: "active", slug: "taken" } })
          const taken = yield* client.members.create({ payload: { name: "Other", status: "active", slug: "taken" } }).pipe(Effect.flip)
          assert.instanceOf(taken, ValidationError)
          assert.deepStrictEqual((taken as ValidationError).errors, { slug: ["The slug has already been taken."] })
          const neither = yield* client.members.search({ query: {} }).pipe(Effect.flip)
          assert.instanceOf(neither, ValidationError)
          assert.sameMembers(Object.keys((neither as ValidationError).errors), ["email", "name"])
        }))
    })
  })
}
