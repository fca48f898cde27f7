/**
 * Webhook subscriptions over HTTP (docs/webhooks.md "Subscriptions"), on every storage runtime:
 * flat objects, the secret shown at creation only, a URL posted again updated in place with its
 * secret (ruling 22), the create rules, delete, and each event fanned out to the subscriptions
 * that want it, with its change (ruling 19). Access and ids are checked by contract.test.ts.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"
import { Members, Transactor } from "@chamber/core"
import { runtimes } from "@chamber/pg-adapter/testing"
import { call, chamberWithKey, type Reply, serverOn } from "./fixture.ts"

const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/
const hook = (key: string, body: unknown) => call("POST", "/api/v1/hooks", { key, body })
const ok = (reply: Reply, status: number) => {
  assert.strictEqual(reply.status, status, JSON.stringify(reply.body))
  return reply.body
}

/** The deliveries waiting for each subscription of a tenant, by the kind of their event. */
const deliveries = (tenantId: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<{ readonly hook_id: string; readonly type: string; readonly status: string }>`
      SELECT d.hook_id::text, e.type, d.status FROM webhook_deliveries d JOIN outbox_events e ON e.id = d.event_id
      WHERE d.tenant_id = ${tenantId} ORDER BY d.id`
  }).pipe(Effect.orDie)

for (const rt of runtimes()) {
  describe(`webhook subscriptions on ${rt.name}`, () => {
    layer(serverOn(rt), { timeout: 120_000 })((it) => {
      it.effect("POST: 201 with the flat subscription and its secret; GET lists them without secrets or meta", () =>
        Effect.gen(function*() {
          const { key } = yield* chamberWithKey("hooks:write")
          const created = ok(yield* hook(key, { url: "https://hooks.example.com/a", events: ["member.created", "invoice.paid", "member.created"] }), 201)
          assert.deepStrictEqual(Object.keys(created), ["id", "url", "events", "active", "created_at", "secret"])
          assert.deepInclude(created, { url: "https://hooks.example.com/a", events: ["member.created", "invoice.paid"], active: true })
          assert.match(created.secret, SECRET)
          assert.strictEqual(Buffer.from(created.secret.slice(6), "base64").length, 32)
          const other = ok(yield* hook(key, { url: "https://hooks.example.com/b", events: ["deal.approved"] }), 201)
          assert.notStrictEqual(other.secret, created.secret)
          const list = ok(yield* call("GET", "/api/v1/hooks", { key }), 200)
          assert.deepStrictEqual(Object.keys(list), ["data"])
          const { secret: _a, ...a } = created
          const { secret: _b, ...b } = other
          assert.deepStrictEqual(list.data, [a, b])
          assert.notInclude(JSON.stringify(list), "whsec_")
        }))

      it.effect("a URL posted again is the same subscription: events replaced, active again, failures reset, the same secret, 201", () =>
        Effect.gen(function*() {
          const { tenant, key } = yield* chamberWithKey("hooks:write")
          const first = ok(yield* hook(key, { url: "https://hooks.example.com/zap", events: ["member.created"] }), 201)
          const sql = yield* SqlClient.SqlClient
          yield* sql`UPDATE webhook_subscriptions SET active = false, failure_count = 20 WHERE id = ${first.id}`.pipe(Effect.orDie)
          const again = ok(yield* hook(key, { url: "https://hooks.example.com/zap", events: ["contact.created", "deal.approved"] }), 201)
          assert.deepStrictEqual(again, { ...first, events: ["contact.created", "deal.approved"] })
          const rows = yield* sql<{ readonly failure_count: number; readonly active: boolean }>`
            SELECT failure_count, active FROM webhook_subscriptions WHERE tenant_id = ${tenant.id}`.pipe(Effect.orDie)
          assert.deepStrictEqual(rows.map((r) => [r.failure_count, r.active]), [[0, true]])
          // Concurrent posts of one new URL make one subscription, with one secret.
          const replies = yield* Effect.all(Array.from({ length: 10 }, () => hook(key, { url: "https://hooks.example.com/race", events: ["member.created"] })), {
            concurrency: 10
          })
          assert.strictEqual(new Set(replies.map((r) => ok(r, 201).id)).size, 1)
          assert.strictEqual(new Set(replies.map((r) => r.body.secret)).size, 1)
          assert.lengthOf(ok(yield* call("GET", "/api/v1/hooks", { key }), 200).data, 2)
        }))

      it.effect("HookCreate rules: https URL of at most 500 characters, at least one known event kind", () =>
        Effect.gen(function*() {
          const { key } = yield* chamberWithKey("hooks:write")
          const invalid = (body: unknown, fields: ReadonlyArray<string>) =>
            Effect.map(hook(key, body), (reply) => {
              assert.strictEqual(reply.status, 422, JSON.stringify(body))
              assert.sameMembers(Object.keys(reply.body.errors), [...fields], JSON.stringify(reply.body))
              return reply.body.errors
            })
          const events = ["member.created"]
          for (const url of ["http://hooks.example.com/a", "ftp://x.example", "https://", "hooks.example.com", "https:// bad host", 5]) {
            yield* invalid({ url, events }, ["url"])
          }
          // A host and a port as written: URL parsing alone would find host "nohost" in `https:///nohost`.
          const noHost = ["The url field must be a valid URL starting with https://."]
          for (const url of ["https:///nohost", "https:////hooks.example.com/a", "https:/\\hooks.example.com/a", "https://\\hooks.example.com/a"]) {
            assert.deepStrictEqual((yield* invalid({ url, events }, ["url"])).url, noHost, url)
          }
          const portZero = ["The url field must have a port from 1 to 65535."]
          for (const url of ["https://hooks.example.com:0/a", "https://hooks.example.com:000/a", "https://[2001:db8::1]:0/"]) {
            assert.deepStrictEqual((yield* invalid({ url, events }, ["url"])).url, portZero, url)
          }
          ok(yield* hook(key, { url: "https://hooks.example.com:8443/a", events }), 201)
          const long = `https://hooks.example.com/${"a".repeat(500 - 26)}`
          assert.lengthOf(long, 500)
          ok(yield* hook(key, { url: long, events }), 201)
          assert.deepStrictEqual((yield* invalid({ url: `${long}a`, events }, ["url"])).url, ["The url field must not be greater than 500 characters."])
          assert.deepStrictEqual((yield* invalid({ url: "https://h.example", events: [] }, ["events"])).events, ["The events field must have at least 1 item."])
          yield* invalid({ url: "https://h.example", events: ["member.deleted"] }, ["events.0"])
          yield* invalid({ url: "https://h.example", events: "member.created" }, ["events"])
          yield* invalid({}, ["url", "events"])
        }))

      it.effect("DELETE: {deleted: true}; then 404; another chamber's subscription is a 404 and stays", () =>
        Effect.gen(function*() {
          const a = yield* chamberWithKey("hooks:write")
          const b = yield* chamberWithKey("hooks:write")
          const mine = ok(yield* hook(a.key, { url: "https://hooks.example.com/a", events: ["member.created"] }), 201)
          const theirs = ok(yield* hook(b.key, { url: "https://hooks.example.com/a", events: ["member.created"] }), 201)
          assert.strictEqual((yield* call("DELETE", `/api/v1/hooks/${theirs.id}`, { key: a.key })).status, 404)
          assert.deepStrictEqual(ok(yield* call("DELETE", `/api/v1/hooks/${mine.id}`, { key: a.key }), 200), { deleted: true })
          assert.deepStrictEqual(ok(yield* call("DELETE", `/api/v1/hooks/${mine.id}`, { key: a.key }), 404), { message: "Not found." })
          assert.lengthOf(ok(yield* call("GET", "/api/v1/hooks", { key: b.key }), 200).data, 1)
        }))

      it.effect("an event gets one delivery per active subscription of its chamber listing its kind, written with its change", () =>
        Effect.gen(function*() {
          const a = yield* chamberWithKey("hooks:write,members:write")
          const b = yield* chamberWithKey("hooks:write,members:write")
          const wants = ok(yield* hook(a.key, { url: "https://hooks.example.com/members", events: ["member.created", "member.updated"] }), 201)
          ok(yield* hook(a.key, { url: "https://hooks.example.com/deals", events: ["deal.approved"] }), 201)
          const paused = ok(yield* hook(a.key, { url: "https://hooks.example.com/paused", events: ["member.created"] }), 201)
          ok(yield* hook(b.key, { url: "https://hooks.example.com/members", events: ["member.created"] }), 201)
          const sql = yield* SqlClient.SqlClient
          yield* sql`UPDATE webhook_subscriptions SET active = false WHERE id = ${paused.id}`.pipe(Effect.orDie)

          ok(yield* call("POST", "/api/v1/members", { key: a.key, body: { name: "Acme", status: "active" } }), 201)
          assert.deepStrictEqual(yield* deliveries(a.tenant.id), [{ hook_id: String(wants.id), type: "member.created", status: "pending" }])
          assert.deepStrictEqual(yield* deliveries(b.tenant.id), [])

          // A change rolled back leaves no event and no delivery.
          yield* (yield* Transactor).withTransaction(
            Effect.andThen((yield* Members).create(a.tenant.id, { name: "Gone", status: "active" }), Effect.fail("rolled back" as const))
          ).pipe(Effect.flip)
          assert.lengthOf(yield* deliveries(a.tenant.id), 1)

          // A deleted subscription takes its pending deliveries with it.
          ok(yield* call("DELETE", `/api/v1/hooks/${wants.id}`, { key: a.key }), 200)
          assert.deepStrictEqual(yield* deliveries(a.tenant.id), [])
        }))
    })
  })
}
