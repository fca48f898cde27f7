/**
 * With CHAMBER_SECRET_KEY set, webhook secrets are encrypted at rest and the API still answers
 * the same secret when a URL is posted again (docs/webhooks.md "Secrets"); a stored secret the
 * server cannot decrypt makes that re-post a 503 that changes nothing, never a 500. The key is set
 * before the server is built, for this file's process only.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"
import { webhookSecrets } from "@chamber/pg-adapter"
import { runtimes } from "@chamber/pg-adapter/testing"
import { call, chamberWithKey, serverOn } from "./fixture.ts"

process.env.CHAMBER_SECRET_KEY = "an operator's secret key"

for (const rt of runtimes()) {
  describe(`webhook secrets at rest on ${rt.name}`, () => {
    layer(serverOn(rt), { timeout: 120_000 })((it) => {
      it.effect("stored encrypted, never in the clear; the same secret answered again", () =>
        Effect.gen(function*() {
          const { tenant, key } = yield* chamberWithKey("hooks:write")
          const body = { url: "https://hooks.example.com/sealed", events: ["member.created"] }
          const created = (yield* call("POST", "/api/v1/hooks", { key, body })).body
          const sql = yield* SqlClient.SqlClient
          const rows = yield* sql<{ readonly secret: string }>`SELECT secret FROM webhook_subscriptions WHERE tenant_id = ${tenant.id}`.pipe(Effect.orDie)
          assert.match(rows[0]!.secret, /^v2:[0-9a-f]{8}:/)
          assert.notInclude(rows[0]!.secret, created.secret.slice(6))
          assert.strictEqual((yield* call("POST", "/api/v1/hooks", { key, body })).body.secret, created.secret)
        }))

      it.effect("an Idempotency-Key's kept answer of POST /hooks and of rotate-secret holds the secret sealed, and replays it in the clear", () =>
        Effect.gen(function*() {
          const { key } = yield* chamberWithKey("hooks:write")
          const sql = yield* SqlClient.SqlClient
          const body = { url: "https://hooks.example.com/kept", events: ["member.created"] }
          const created = yield* call("POST", "/api/v1/hooks", { key, body, headers: { "idempotency-key": "create-kept" } })
          assert.strictEqual(created.status, 201, created.text)
          const rotated = yield* call("POST", `/api/v1/hooks/${created.body.id}/rotate-secret`, { key, body: {}, headers: { "idempotency-key": "rotate-kept" } })
          assert.strictEqual(rotated.status, 200, rotated.text)
          const kept = yield* sql<{ readonly body: Uint8Array }>`SELECT body FROM idempotency_keys WHERE idempotency_key IN ('create-kept', 'rotate-kept')`.pipe(Effect.orDie)
          assert.lengthOf(kept, 2)
          for (const row of kept) {
            const stored = Buffer.from(row.body).toString("utf8")
            assert.notInclude(stored, "whsec_", "no secret in the clear at rest")
            assert.include(stored, "v2:")
          }
          const again = yield* call("POST", "/api/v1/hooks", { key, body, headers: { "idempotency-key": "create-kept" } })
          assert.strictEqual(again.headers["idempotent-replayed"], "true")
          assert.strictEqual(again.text, created.text)
          const rotatedAgain = yield* call("POST", `/api/v1/hooks/${created.body.id}/rotate-secret`, { key, body: {}, headers: { "idempotency-key": "rotate-kept" } })
          assert.strictEqual(rotatedAgain.text, rotated.text)
          assert.strictEqual(rotatedAgain.body.data.secret, rotated.body.data.secret)
        }))

      it.effect("a re-posted URL whose stored secret is damaged or sealed with another key: 503 saying why, nothing changed; other subscriptions unaffected", () =>
        Effect.gen(function*() {
          const { key } = yield* chamberWithKey("hooks:write")
          const post = (path: string, events: ReadonlyArray<string>) => call("POST", "/api/v1/hooks", { key, body: { url: `https://hooks.example.com/${path}`, events } })
          const damaged = (yield* post("damaged", ["member.created"])).body
          const foreign = (yield* post("foreign", ["member.created"])).body
          const fine = (yield* post("fine", ["member.created"])).body
          const sql = yield* SqlClient.SqlClient
          // The last byte of the ciphertext flipped; the other one sealed under a key this server lacks.
          yield* sql`UPDATE webhook_subscriptions SET secret = overlay(secret placing (CASE WHEN right(secret, 2) = 'AA' THEN 'BA' ELSE 'AA' END) from length(secret) - 1)
            WHERE id = ${damaged.id}`.pipe(Effect.orDie)
          yield* sql`UPDATE webhook_subscriptions SET secret = ${webhookSecrets("another operator's key").seal(foreign.secret)} WHERE id = ${foreign.id}`.pipe(Effect.orDie)
          for (const [hook, path, why] of [[damaged, "damaged", /damaged/], [foreign, "foreign", /encrypted with another key than CHAMBER_SECRET_KEY/]] as const) {
            const again = yield* post(path, ["contact.created"])
            assert.strictEqual(again.status, 503, JSON.stringify(again.body))
            assert.deepStrictEqual(Object.keys(again.body), ["message"])
            assert.match(again.body.message, /^This webhook subscription's signing secret cannot be read: /)
            assert.match(again.body.message, why)
            const [row] = yield* sql<{ readonly events: ReadonlyArray<string> }>`SELECT events FROM webhook_subscriptions WHERE id = ${hook.id}`.pipe(Effect.orDie)
            assert.deepStrictEqual(row!.events, ["member.created"], "nothing changed")
          }
          const list = yield* call("GET", "/api/v1/hooks", { key })
          assert.strictEqual(list.status, 200)
          assert.lengthOf(list.body.data, 3)
          assert.strictEqual((yield* post("fine", ["deal.approved"])).body.secret, fine.secret)
        }))
    })
  })
}
