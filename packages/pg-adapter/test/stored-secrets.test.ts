/**
 * The stored webhook secrets as a whole (docs/webhooks.md "Secrets", "Rotating
 * CHAMBER_SECRET_KEY"), on embedded PGlite and on PostgreSQL: the start's check tells a key that
 * does not open them (every secret of another key, or none set) from a damaged secret, and rekey
 * re-encrypts every secret it can read under the new key, marks a damaged one (so that the new
 * key alone still starts) and changes nothing when one is of neither key.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as SqlClient from "effect/sql/SqlClient"
import { Hooks, Tenants, WebhookSecrets } from "@chamber/core"
import { checkStoredSecrets, rekeyStoredSecrets, StorageLive, webhookSecrets } from "../src/index.ts"
import { onDatabase, runtimes } from "./harness.ts"

/** One bit of the ciphertext's body flipped (the key id kept). */
const tamper = (stored: string) => {
  const at = stored.lastIndexOf(":") + 1
  const raw = Buffer.from(stored.slice(at), "base64")
  raw[raw.length - 1] = raw[raw.length - 1]! ^ 1
  return stored.slice(0, at) + raw.toString("base64")
}

const withKeys = (env: Record<string, string>) => Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env }))

for (const rt of runtimes()) {
  describe(`stored webhook secrets on ${rt.name}`, () => {
    layer(onDatabase(rt, (config) => StorageLive(config)), { timeout: 120_000 })((it) => {
      it.effect("the start's check and rekey: a wrong or missing key refused, a damaged secret named and marked, the rest re-encrypted", () =>
        Effect.gen(function*() {
          const tenant = yield* (yield* Tenants).create({ name: "Keyed" })
          const hooks = yield* Hooks
          const [good, damaged, clear] = yield* Effect.forEach(["good", "damaged", "clear"], (path) =>
            Effect.orDie(hooks.create(tenant.id, { url: `https://hooks.example.com/${path}`, events: ["member.created"] })))
          const a = webhookSecrets("key a")
          const sql = yield* SqlClient.SqlClient
          const store = (id: number, secret: string) => sql`UPDATE webhook_subscriptions SET secret = ${secret} WHERE id = ${id}`.pipe(Effect.orDie)
          yield* store(good!.id, a.seal(good!.secret))
          yield* store(damaged!.id, tamper(a.seal(damaged!.secret)))
          const stored = () => sql<{ readonly id: string; readonly secret: string }>`SELECT id::text, secret FROM webhook_subscriptions ORDER BY id`.pipe(Effect.orDie)
          const before = yield* stored()

          assert.deepStrictEqual(yield* checkStoredSecrets.pipe(Effect.provideService(WebhookSecrets, a)), { damaged: [damaged!.id] })
          const wrong = yield* checkStoredSecrets.pipe(Effect.provideService(WebhookSecrets, webhookSecrets("key b")), Effect.flip)
          assert.deepStrictEqual([wrong._tag, wrong.subscriptions, wrong.keySet], ["SecretKeyMismatch", [good!.id, damaged!.id], true])
          assert.match(wrong.message, /^CHAMBER_SECRET_KEY does not decrypt the stored webhook secrets/)
          const none = yield* checkStoredSecrets.pipe(Effect.provideService(WebhookSecrets, webhookSecrets(undefined)), Effect.flip)
          assert.deepStrictEqual([none.subscriptions, none.keySet], [[good!.id, damaged!.id], false])

          // Without the old key, or without a new one, nothing changes.
          const refused = yield* rekeyStoredSecrets.pipe(withKeys({ CHAMBER_SECRET_KEY: "key b" }), Effect.flip)
          assert.strictEqual(refused._tag, "SecretKeyMismatch")
          assert.strictEqual((yield* rekeyStoredSecrets.pipe(withKeys({ CHAMBER_SECRET_KEY_PREVIOUS: "key a" }), Effect.flip))._tag, "NoSecretKey")
          assert.deepStrictEqual(yield* stored(), before)

          assert.deepStrictEqual(yield* rekeyStoredSecrets.pipe(withKeys({ CHAMBER_SECRET_KEY: "key b", CHAMBER_SECRET_KEY_PREVIOUS: "key a" })), {
            rekeyed: 2,
            unchanged: 0,
            damaged: [damaged!.id]
          })
          const after = new Map((yield* stored()).map((r) => [Number(r.id), r.secret]))
          const b = webhookSecrets("key b")
          assert.strictEqual(Result.getOrThrow(b.open(after.get(good!.id)!)), good!.secret)
          assert.strictEqual(Result.getOrThrow(b.open(after.get(clear!.id)!)), clear!.secret)
          // Marked damaged, its stored form kept: the new key alone names it and starts.
          assert.strictEqual(after.get(damaged!.id), `damaged:${before.find((r) => Number(r.id) === damaged!.id)!.secret}`)
          assert.deepStrictEqual(yield* checkStoredSecrets.pipe(Effect.provideService(WebhookSecrets, b)), { damaged: [damaged!.id] })
        }))

      it.effect("rekey re-encrypts a rotated secret's previous one while it still signs, and drops one whose overlap has ended", () =>
        Effect.gen(function*() {
          const tenant = yield* (yield* Tenants).create({ name: "Rotated" })
          const hooks = yield* Hooks
          const [live, ended] = yield* Effect.forEach(["live", "ended"], (path) =>
            Effect.orDie(hooks.create(tenant.id, { url: `https://hooks.example.com/rotated-${path}`, events: ["member.created"] })))
          const a = webhookSecrets("key a")
          const sql = yield* SqlClient.SqlClient
          // Sealed with key a, as a server with CHAMBER_SECRET_KEY=key a would have stored them after rotating.
          for (const [hook, seconds] of [[live!, 3600], [ended!, -1]] as const) {
            yield* sql`UPDATE webhook_subscriptions SET secret = ${a.seal(`${hook.secret}`)}, previous_secret = ${a.seal(`previous of ${hook.id}`)},
              previous_expires_at = now() + ${seconds} * interval '1 second' WHERE id = ${hook.id}`.pipe(Effect.orDie)
          }
          yield* rekeyStoredSecrets.pipe(withKeys({ CHAMBER_SECRET_KEY: "key b", CHAMBER_SECRET_KEY_PREVIOUS: "key a" }))
          const rows = new Map((yield* sql<{ readonly id: string; readonly previous_secret: string | null; readonly previous_expires_at: Date | null }>`
            SELECT id::text, previous_secret, previous_expires_at FROM webhook_subscriptions WHERE tenant_id = ${tenant.id}`.pipe(Effect.orDie)).map((r) => [Number(r.id), r]))
          const b = webhookSecrets("key b")
          assert.strictEqual(Result.getOrThrow(b.open(rows.get(live!.id)!.previous_secret!)), `previous of ${live!.id}`)
          assert.isNotNull(rows.get(live!.id)!.previous_expires_at)
          assert.deepStrictEqual([rows.get(ended!.id)!.previous_secret, rows.get(ended!.id)!.previous_expires_at], [null, null])
        }))
    })
  })
}
