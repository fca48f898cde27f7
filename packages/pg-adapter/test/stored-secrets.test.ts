/**
 * The stored webhook secrets as a whole (docs/webhooks.md "Secrets", "Rotating
 * CHAMBER_SECRET_KEY"), on embedded PGlite and on PostgreSQL: the start's check tells a key that
 * does not open them (every secret of another key, or none set) from a damaged secret, and rekey
 * re-encrypts every secret it can read under the new key, marks a damaged one (so that the new
 * key alone still starts) and changes nothing when one is of neither key; the kept
 * Idempotency-Key answers that hold a secret are re-encrypted with them, a page at a time, and a
 * run that stopped part way (on PostgreSQL: its connection cut while it waits on a page) keeps
 * the pages it committed and is finished by running it again.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Result from "effect/Result"
import * as SqlClient from "effect/sql/SqlClient"
import pg from "pg"
import { Hooks, openAnswer, sealAnswer, Tenants, WebhookSecrets } from "@chamber/core"
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
            damaged: [damaged!.id],
            previous_secrets: { rekeyed: 0, unchanged: 0, dropped: 0 },
            kept_answers: { rekeyed: 0, unchanged: 0, unreadable: 0 }
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
          const report = yield* rekeyStoredSecrets.pipe(withKeys({ CHAMBER_SECRET_KEY: "key b", CHAMBER_SECRET_KEY_PREVIOUS: "key a" }))
          assert.deepStrictEqual(report.previous_secrets, { rekeyed: 1, unchanged: 0, dropped: 1 })
          const rows = new Map((yield* sql<{ readonly id: string; readonly previous_secret: string | null; readonly previous_expires_at: Date | null }>`
            SELECT id::text, previous_secret, previous_expires_at FROM webhook_subscriptions WHERE tenant_id = ${tenant.id}`.pipe(Effect.orDie)).map((r) => [Number(r.id), r]))
          const b = webhookSecrets("key b")
          assert.strictEqual(Result.getOrThrow(b.open(rows.get(live!.id)!.previous_secret!)), `previous of ${live!.id}`)
          assert.isNotNull(rows.get(live!.id)!.previous_expires_at)
          assert.deepStrictEqual([rows.get(ended!.id)!.previous_secret, rows.get(ended!.id)!.previous_expires_at], [null, null])
        }))

      it.effect("rekey re-encrypts every kept answer holding a secret, pages past the first included, and finishes what an interrupted run left", () =>
        Effect.gen(function*() {
          const tenant = yield* (yield* Tenants).create({ name: "Kept answers" })
          const sql = yield* SqlClient.SqlClient
          const [key] = yield* sql<{ readonly id: string }>`
            INSERT INTO api_keys (tenant_id, name, prefix, key_hash, scopes)
            VALUES (${tenant.id}, 'k', 'cck_kept', ${`kept-${Math.random()}`}, '["hooks:write"]'::jsonb) RETURNING id::text AS id`.pipe(Effect.orDie)
          const a = webhookSecrets("key a")
          const b = webhookSecrets("key b")
          const answer = new TextEncoder().encode(JSON.stringify({ id: 9, url: "https://hooks.example.com/kept", secret: b.generate() }))
          const keep = (value: string, body: Uint8Array) =>
            sql`INSERT INTO idempotency_keys (tenant_id, api_key_id, idempotency_key, created_ms, fingerprint, status, body)
                VALUES (${tenant.id}, ${key!.id}, ${value}, 0, 'POST /api/v1/hooks 00', 201, ${body})`.pipe(Effect.orDie)
          // 1,100 answers under key a (three pages); the first 550 as a run that stopped after its
          // first page (and part of the next, by a server meanwhile) leaves them: under key b.
          yield* sql`INSERT INTO idempotency_keys (tenant_id, api_key_id, idempotency_key, created_ms, fingerprint, status, body)
            SELECT ${tenant.id}, ${key!.id}, 'hook-' || lpad(g::text, 5, '0'), 0, 'POST /api/v1/hooks 00', 201, ${sealAnswer(a, answer)}::bytea
            FROM generate_series(1, 1100) g`.pipe(Effect.orDie)
          yield* sql`UPDATE idempotency_keys SET body = ${sealAnswer(b, answer)} WHERE tenant_id = ${tenant.id} AND idempotency_key <= 'hook-00550'`.pipe(Effect.orDie)
          // An answer without a secret stays as it is; one kept in the clear is encrypted; one of a
          // third key is left, counted.
          const plain = new TextEncoder().encode(JSON.stringify({ data: { id: 1, name: "Acme" } }))
          yield* keep("member", plain)
          yield* keep("clear", answer)
          const foreign = sealAnswer(webhookSecrets("key c"), answer)
          yield* keep("foreign", foreign)

          const report = yield* rekeyStoredSecrets.pipe(withKeys({ CHAMBER_SECRET_KEY: "key b", CHAMBER_SECRET_KEY_PREVIOUS: "key a" }))
          assert.deepStrictEqual(report.kept_answers, { rekeyed: 551, unchanged: 550, unreadable: 1 })
          const stored = new Map((yield* sql<{ readonly idempotency_key: string; readonly body: Uint8Array }>`
            SELECT idempotency_key, body FROM idempotency_keys WHERE tenant_id = ${tenant.id}`.pipe(Effect.orDie))
            .map((r) => [r.idempotency_key, new Uint8Array(r.body)]))
          assert.strictEqual(stored.size, 1103)
          const text = (bytes: Uint8Array | undefined) => bytes === undefined ? undefined : new TextDecoder().decode(bytes)
          // Key b alone opens every one holding a secret, each to the bytes first answered.
          for (const [value, body] of stored) {
            if (value === "member" || value === "foreign") continue
            assert.strictEqual(text(openAnswer(b, body)), text(answer), value)
          }
          assert.deepStrictEqual(stored.get("member"), plain)
          assert.deepStrictEqual(stored.get("foreign"), foreign)
          assert.notStrictEqual(text(stored.get("clear")), text(answer))

          // Run again, it changes nothing.
          const again = yield* rekeyStoredSecrets.pipe(withKeys({ CHAMBER_SECRET_KEY: "key b", CHAMBER_SECRET_KEY_PREVIOUS: "key a" }))
          assert.deepStrictEqual(again.kept_answers, { rekeyed: 0, unchanged: 1101, unreadable: 1 })
        }))

      if (rt.name === "postgres") {
        it.effect("rekey whose connection is cut mid-run keeps the pages it committed, and running it again finishes the rest", () =>
          Effect.gen(function*() {
            const tenant = yield* (yield* Tenants).create({ name: "Cut" })
            const sql = yield* SqlClient.SqlClient
            const a = webhookSecrets("key a")
            // 600 subscriptions under key a: the pages run past the first.
            yield* sql`INSERT INTO webhook_subscriptions (tenant_id, url, events, secret)
              SELECT ${tenant.id}, 'https://hooks.example.com/cut-' || g, '["member.created"]'::jsonb, ${a.seal("whsec_cut")}
              FROM generate_series(1, 600) g`.pipe(Effect.orDie)
            // The first row of the second page, held by another session: rekey commits its first page, then waits.
            const [held] = yield* sql<{ readonly id: string }>`SELECT s.id::text AS id FROM webhook_subscriptions s ORDER BY s.id OFFSET 500 LIMIT 1`.pipe(Effect.orDie)
            const [{ db }] = (yield* sql<{ readonly db: string }>`SELECT current_database() AS db`.pipe(Effect.orDie)) as [{ readonly db: string }]
            const url = new URL(process.env.DATABASE_URL!)
            url.pathname = `/${db}`
            const holder = new pg.Client({ connectionString: url.toString() })
            yield* Effect.acquireRelease(Effect.promise(() => holder.connect()), () => Effect.promise(() => holder.end()))
            yield* Effect.promise(() => holder.query(`BEGIN; SELECT 1 FROM webhook_subscriptions WHERE id = ${Number(held!.id)} FOR UPDATE`))
            const keys = withKeys({ CHAMBER_SECRET_KEY: "key b", CHAMBER_SECRET_KEY_PREVIOUS: "key a" })
            const run = yield* Effect.forkChild(Effect.exit(rekeyStoredSecrets.pipe(keys)))
            // Its connection cut while it waits on the second page.
            let cut = 0
            for (let i = 0; i < 1_500 && cut === 0; i++) {
              yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))
              cut = (yield* sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`.pipe(Effect.orDie)).length
            }
            assert.strictEqual(cut, 1)
            const exit = yield* Fiber.join(run)
            assert.isTrue(exit._tag === "Failure", String(exit))
            yield* Effect.promise(() => holder.query("COMMIT"))
            const b = webhookSecrets("key b")
            const mine = () => sql<{ readonly id: string; readonly secret: string }>`
              SELECT id::text, secret FROM webhook_subscriptions WHERE tenant_id = ${tenant.id} ORDER BY id`.pipe(Effect.orDie)
            const underB = (rows: ReadonlyArray<{ readonly secret: string }>) => rows.filter((r) => Result.isSuccess(b.open(r.secret))).length
            const before = yield* mine()
            const committed = before.filter((r) => Number(r.id) < Number(held!.id)).length
            // The first page committed, nothing of the second.
            assert.isAbove(committed, 0)
            assert.strictEqual(underB(before), committed)

            const report = yield* rekeyStoredSecrets.pipe(keys)
            assert.strictEqual(report.rekeyed, 600 - committed)
            const after = yield* mine()
            assert.strictEqual(underB(after), 600)
            assert.isTrue(after.every((r) => Result.getOrThrow(b.open(r.secret)) === "whsec_cut"))
          }))
      }
    })
  })
}
