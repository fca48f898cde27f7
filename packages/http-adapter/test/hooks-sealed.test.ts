/**
 * With CHAMBER_SECRET_KEY set, webhook secrets are encrypted at rest and the API still answers
 * the same secret when a URL is posted again (docs/webhooks.md "Secrets"). The key is set before
 * the server is built, for this file's process only.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"
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
          assert.match(rows[0]!.secret, /^v1:/)
          assert.notInclude(rows[0]!.secret, created.secret.slice(6))
          assert.strictEqual((yield* call("POST", "/api/v1/hooks", { key, body })).body.secret, created.secret)
        }))
    })
  })
}
