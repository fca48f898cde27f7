/**
 * The admin TUI over the real services (docs/admin.md): AdminDataLive on embedded PGlite and on
 * PostgreSQL, read and driven through the screens with ink-testing-library: today's use from the
 * saved rate-limit windows, the sparkline from recorded attempts, minting, revoking, reactivating
 * and replaying in the database. On PostgreSQL, today's use from Redis when REDIS_URL is set, and
 * the database going away behind a TCP proxy and coming back: the screen says so, then recovers.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"
import { mkdtempSync } from "node:fs"
import { join } from "node:path"
import { Hooks, Keys, Members, RateLimitSnapshots, rateLimitKey, RateLimitStore, Tenants } from "@chamber/core"
import { type DatabaseConfig, StorageLive } from "@chamber/pg-adapter"
import { DatabaseConfigRef, runtimes } from "@chamber/pg-adapter/testing"
import { tcpProxy } from "@chamber/pg-adapter/testing/tcp-proxy"
import { RedisRateLimitStore } from "@chamber/redis-adapter"
import { DataError } from "../../src/tui/AdminData.ts"
import { adminDataLive } from "../../src/tui/AdminDataLive.ts"
import { KEY, mount } from "./screen.ts"
import { suiteDir } from "../tempDirs.ts"

const NO_REDIS = { perMinute: 120, redisUrl: undefined }
const REDIS_URL = process.env.REDIS_URL || "redis://127.0.0.1:6379"

/** A chamber with an admin and a staff member, two keys (one revoked, one with 42 requests today), two subscriptions and their deliveries. */
const seed = Effect.gen(function*() {
  const tenants = yield* Tenants
  const keys = yield* Keys
  const sql = yield* SqlClient.SqlClient
  const tenant = yield* tenants.create({ name: "Riverside Live" })
  yield* tenants.addUser(tenant.id, "ann@riverside.example", "chamber_admin")
  yield* tenants.addUser(tenant.id, "sam@riverside.example", "staff")
  const zapier = yield* keys.mint({ tenant: tenant.id, asEmail: "ann@riverside.example", name: "Zapier", scopes: "read" })
  const old = yield* keys.mint({ tenant: tenant.id, asEmail: "ann@riverside.example", name: "Old site", scopes: "events:read" })
  yield* keys.revoke(old.prefix)
  const now = Date.now()
  yield* (yield* RateLimitSnapshots).save([{
    key: rateLimitKey(tenant.public_id, zapier.id),
    buckets: [{ minute: Math.floor((now - 3_600_000) / 60_000), count: 40, last: now - 3_600_000 }, { minute: Math.floor((now - 60_000) / 60_000), count: 2, last: now - 60_000 }]
  }], now)
  const crm = yield* (yield* Hooks).create(tenant.id, { url: "https://crm.riverside.example/hook", events: ["member.created"] })
  const old_ = yield* (yield* Hooks).create(tenant.id, { url: "https://old.riverside.example/hook", events: ["member.created"] })
  yield* (yield* Members).create(tenant.id, { name: "Acme", status: "active" })
  const rows = yield* sql<{ id: number; hook_id: number }>`SELECT id::int AS id, hook_id::int AS hook_id FROM webhook_deliveries WHERE tenant_id = ${tenant.id} ORDER BY id`
  const failed = rows.find((r) => r.hook_id === crm.id)!.id
  const other = rows.find((r) => r.hook_id === old_.id)!.id
  for (const [i, status] of [500, 500, 503, 500].entries()) {
    yield* sql`INSERT INTO webhook_attempts (tenant_id, delivery_id, attempted_at, status, latency_ms, response_excerpt, error)
      VALUES (${tenant.id}, ${failed}, now() - ${`${10 - i} minutes`}::interval, ${status}, ${100 + i}, 'Internal Server Error', ${`the destination answered ${status}`})`
  }
  yield* sql`INSERT INTO webhook_attempts (tenant_id, delivery_id, attempted_at, status, latency_ms, response_excerpt, error)
    VALUES (${tenant.id}, ${other}, now(), 200, 31, 'ok', NULL)`
  yield* sql`UPDATE webhook_deliveries SET status = 'failed', attempt_count = 4, settled_at = now() WHERE id = ${failed}`
  yield* sql`UPDATE webhook_deliveries SET status = 'succeeded', attempt_count = 1, settled_at = now() WHERE id = ${other}`
  yield* sql`UPDATE webhook_subscriptions SET failure_count = 1, last_failure_at = now() WHERE id = ${crm.id}`
  yield* sql`UPDATE webhook_subscriptions SET active = false, failure_count = 20, last_failure_at = now() WHERE id = ${old_.id}`
  return { tenant: tenant.public_id, zapier: zapier.prefix, old: old.prefix, crm: crm.id, oldHook: old_.id, failed, other }
})

const dir = suiteDir("tui")

/** The suite's database; the embedded one in a data directory of its own (the seed closes it before the TUI opens it). */
const configOf = (config: DatabaseConfig): DatabaseConfig =>
  config._tag === "Embedded" ? { _tag: "Embedded", dataDir: join(mkdtempSync(join(dir, "run-")), "data") } : config

const seeded = (config: DatabaseConfig) => Effect.scoped(seed.pipe(Effect.provide(StorageLive(config))))

for (const rt of runtimes()) {
  describe(`admin TUI over the real services on ${rt.name}`, () => {
    layer(rt.database, { timeout: 120_000 })((it) => {
      it.effect("reads and acts on the database: keys with today's use, subscriptions with their sparkline, deliveries, replay", () =>
        Effect.gen(function*() {
          const config = configOf(yield* DatabaseConfigRef)
          const fixture = yield* seeded(config)
          const data = adminDataLive(config, NO_REDIS)
          yield* Effect.addFinalizer(() => Effect.promise(() => data.close()))
          yield* Effect.promise(async () => {
            assert.isTrue((await data.tenants()).some((t) => t.id === fixture.tenant && t.name === "Riverside Live"))
            assert.deepStrictEqual(await data.admins(fixture.tenant), ["ann@riverside.example"])
            const keys = await data.keys(fixture.tenant)
            assert.deepInclude(keys.find((k) => k.prefix === fixture.zapier), { name: "Zapier", used_today: 42, daily_limit: 25_000, revoked_at: null })
            assert.strictEqual(keys.find((k) => k.prefix === fixture.old)!.used_today, null)
            const hooks = await data.hooks(fixture.tenant)
            assert.deepStrictEqual(hooks.map((h) => [h.id, h.active, h.failure_count, h.recent]), [
              [fixture.crm, true, 1, [false, false, false, false]],
              [fixture.oldHook, false, 20, [true]]
            ])
            const failed = await data.deliveries({ tenant: fixture.tenant, status: "failed" })
            assert.deepStrictEqual(failed.map((d) => [d.id, d.attempts.map((a) => a.status)]), [[fixture.failed, [500, 500, 503, 500]]])
            assert.deepStrictEqual(await data.failedDeliveries({ tenant: fixture.tenant, hookId: fixture.crm }), [fixture.failed])
            assert.deepStrictEqual(await data.failedDeliveries({ tenant: fixture.tenant, since: new Date(Date.now() + 60_000).toISOString() }), [])
            const refused = await data.mintKey({ tenant: fixture.tenant, asEmail: "sam@riverside.example", name: "x", scopes: ["members:read"], dailyLimit: 10 }).catch((e: unknown) => e)
            assert.instanceOf(refused, DataError)
            assert.strictEqual((refused as DataError).kind, "refused")
            assert.include((refused as DataError).message, "only a chamber_admin may mint keys")
            const missing = await data.keys("chm_nope").catch((e: unknown) => e as DataError)
            assert.deepInclude(missing, { kind: "refused" })
          })

          // The screens over the same data: mint, revoke, reactivate and replay through the keys.
          const s = mount(data, { tenant: fixture.tenant, refreshMs: 300, now: Date.now })
          yield* Effect.promise(async () => {
            await s.until(/Zapier +cck_\w+ +read \(9\) +42\/25k/, 10_000)
            await s.press("n")
            await s.type("Via the TUI")
            await s.press(KEY.enter)
            await s.until("› ann@riverside.example")
            await s.press(KEY.enter, "r", KEY.down, KEY.space, KEY.enter, KEY.enter)
            await s.until("Mint this key? y/n")
            await s.press("y")
            const shown = await s.until(/cck_[0-9A-Za-z]{40}/, 10_000)
            const plaintext = /cck_[0-9A-Za-z]{40}/.exec(shown)![0]
            await s.press(KEY.enter)
            await s.until(/Via the TUI +cck_\w+ +members:read,/, 10_000)
            const minted = (await data.keys(fixture.tenant)).find((k) => k.name === "Via the TUI")!
            assert.strictEqual(minted.prefix, plaintext.slice(0, 12))
            assert.deepStrictEqual(minted.scopes.slice(0, 2), ["members:read", "members:write"])
            await s.press("/", "via", KEY.enter, "d", "y")
            await s.until("Revoked Via the TUI", 10_000)
            assert.isNotNull((await data.keys(fixture.tenant)).find((k) => k.name === "Via the TUI")!.revoked_at)

            await s.press(KEY.esc, "2")
            await s.until(/#\d+ +crm\.riverside\.ex\S* +member\S* +active +1 .* ████/, 10_000)
            await s.press("A", "y")
            await s.until("Reactivated 1 subscription", 10_000)
            assert.isTrue((await data.hooks(fixture.tenant)).every((h) => h.active))

            await s.press("3", "f")
            await s.until(new RegExp(`› +${fixture.failed} #${fixture.crm} +member\\.created +failed +4 500`), 10_000)
            await s.press(KEY.enter)
            await s.until(/4 +\S+ ago +500 +103 ms +Internal Server Error/, 10_000)
            await s.press("p", "y")
            await s.until(`Replayed delivery ${fixture.failed}: waiting to be sent`, 10_000)
            const [replayed] = await data.deliveries({ tenant: fixture.tenant, ids: [fixture.failed] })
            assert.deepInclude(replayed, { status: "pending", attempt_count: 0 })
            assert.lengthOf(replayed!.attempts, 4, "the earlier attempts stay")
          }).pipe(Effect.ensuring(Effect.sync(() => s.unmount())))
        }), 120_000)

      it.effect("the Backlog screen: a subscription's due deliveries, the oldest's wait and the held ones, as the database counts them", () =>
        Effect.gen(function*() {
          const config = configOf(yield* DatabaseConfigRef)
          // A receiver that has not answered for ten minutes: its subscription's member.created and
          // member.updated of one member wait, the update held behind the create (ruling 32).
          const fixture = yield* Effect.scoped(Effect.gen(function*() {
            const seededFixture = yield* seed
            const sql = yield* SqlClient.SqlClient
            const tenant = yield* (yield* Tenants).get(seededFixture.tenant)
            const members = yield* Members
            const down = yield* (yield* Hooks).create(tenant.id, { url: "https://down.riverside.example/hook", events: ["member.created", "member.updated"] })
            const member = yield* members.create(tenant.id, { name: "Harbor Supply", status: "active" })
            yield* members.update(tenant.id, member.id, { name: "Harbor Supply Co" })
            yield* sql`UPDATE webhook_deliveries SET next_attempt_at = now() - interval '10 minutes' WHERE hook_id = ${down.id} AND NOT held`
            yield* sql`UPDATE webhook_subscriptions SET failure_count = 4 WHERE id = ${down.id}`
            return { ...seededFixture, down: down.id }
          }).pipe(Effect.provide(StorageLive(config))))
          const data = adminDataLive(config, NO_REDIS)
          yield* Effect.addFinalizer(() => Effect.promise(() => data.close()))
          const backlog = yield* Effect.promise(() => data.backlog(fixture.tenant))
          const rows = backlog.subscriptions.map((b) => [b.id, b.active, b.failure_count, b.due, b.held, b.later])
          // The new member's member.created also waits for the crm subscription (due now); the old one's are settled.
          assert.deepStrictEqual(rows, [
            [fixture.down, true, 4, 2, 1, 0],
            [fixture.crm, true, 1, 1, 0, 0],
            [fixture.oldHook, false, 20, 0, 0, 0]
          ])
          const [down, crm] = backlog.subscriptions
          assert.closeTo(down!.oldest_due_seconds, 600, 30)
          assert.isBelow(crm!.oldest_due_seconds, 30)
          assert.isAtLeast(backlog.total.due, 3)
          assert.isAtLeast(backlog.total.held, 1)
          assert.isAtLeast(backlog.total.oldest_due_seconds, down!.oldest_due_seconds)
          assert.isAtLeast(backlog.total.inactive_subscriptions, 1)

          const s = mount(data, { tenant: fixture.tenant, refreshMs: 300, now: Date.now, width: 120 })
          yield* Effect.promise(async () => {
            await s.press("4")
            const shown = await s.until(new RegExp(`› #${fixture.down} +down\\.riverside\\.example/hook +failing +4 +2 +(9m 5\\ds|10m \\d+s) +1 +0`), 10_000)
            assert.match(shown, new RegExp(`#${fixture.oldHook} +old\\.riverside\\.example/hook +OFF +20 +0 +- +0 +0`))
            await s.press(KEY.enter)
            await s.until(new RegExp(`\\d+ #${fixture.down} +member\\.updated +pending`), 10_000)
          }).pipe(Effect.ensuring(Effect.sync(() => s.unmount())))
        }), 120_000)

      if (rt.name === "postgres") {
        it.effect("with REDIS_URL, today's use is what Redis counted (as chamber key usage reads it)", () =>
          Effect.gen(function*() {
            const config = yield* DatabaseConfigRef
            const fixture = yield* seeded(config)
            const data = adminDataLive(config, { perMinute: 120, redisUrl: REDIS_URL })
            yield* Effect.addFinalizer(() => Effect.promise(() => data.close()))
            const zapier = (yield* Effect.promise(() => data.keys(fixture.tenant))).find((k) => k.prefix === fixture.zapier)!
            yield* Effect.gen(function*() {
              const store = yield* RateLimitStore
              for (let i = 0; i < 3; i++) yield* store.hit(rateLimitKey(fixture.tenant, zapier.id), { perMinute: 120, daily: 25_000 })
            }).pipe(Effect.provide(RedisRateLimitStore({ url: REDIS_URL, failOpen: false, timeoutMs: 5_000 })))
            const again = (yield* Effect.promise(() => data.keys(fixture.tenant))).find((k) => k.prefix === fixture.zapier)!
            assert.strictEqual(again.used_today, 3)
          }), 60_000)

        it.effect("a database that goes away: the last data stays, the reason shows, and the screen recovers by itself", () =>
          Effect.gen(function*() {
            const config = yield* DatabaseConfigRef
            if (config._tag !== "Postgres") return
            const fixture = yield* seeded(config)
            const proxy = yield* Effect.acquireRelease(Effect.promise(() => tcpProxy(new URL(config.url))), (p) => Effect.promise(() => p.close()))
            const url = new URL(config.url)
            url.port = String(proxy.port)
            const data = adminDataLive({ _tag: "Postgres", url: url.toString(), maxConnections: 2 }, NO_REDIS, { timeoutMs: 2_000 })
            yield* Effect.addFinalizer(() => Effect.promise(() => data.close()))
            const s = mount(data, { tenant: fixture.tenant, refreshMs: 200, now: Date.now })
            yield* Effect.promise(async () => {
              await s.press("3")
              await s.until(`${fixture.failed} #${fixture.crm}`, 10_000)
              await proxy.close()
              const down = await s.until("The database does not answer", 10_000)
              assert.include(down, `${fixture.failed} #${fixture.crm}`, "the last data stays")
              assert.include(down, "r to retry now")
              assert.notMatch(down, /\bat .+:\d+:\d+/)
              await s.press(KEY.down, "p", "y")
              await s.until(/Could not replay: the database does not answer \(/, 10_000)
              await proxy.open()
              await s.gone("The database does not answer:", 15_000)
              await s.until(new RegExp(`${fixture.failed} #${fixture.crm} .* failed`), 10_000)
              assert.deepInclude((await data.deliveries({ tenant: fixture.tenant, ids: [fixture.failed] }))[0], { status: "failed" })
              assert.isFalse(s.frames().some((f) => /\bat .+:\d+:\d+/.test(f)), "no stack trace, ever")
            }).pipe(Effect.ensuring(Effect.sync(() => s.unmount())))
          }), 120_000)
      }
    })
  })
}
