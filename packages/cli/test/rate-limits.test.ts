/**
 * Rate limits and the key lifecycle as operators run them (docs/operations.md "Rate limits"):
 * real `chamber serve` processes. In-process, on every runtime: `key usage` and `key set-limit`,
 * counts that survive a restart, bad input refused. On PostgreSQL with the Redis of REDIS_URL: two
 * servers share one key's 120 a minute, `key usage` reads Redis, a revocation holds on both at once.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { postgresOnly, runtimes } from "@chamber/pg-adapter/testing"
import { chamber, envLayer, json, serving } from "./harness.ts"

const REDIS_URL = process.env.REDIS_URL || "redis://127.0.0.1:6379"

/** A chamber with an admin and one key of `scopes`; the key's plaintext and prefix. */
const keyOf = (label: string, extra: ReadonlyArray<string> = []) =>
  Effect.gen(function*() {
    const tenant = json(yield* chamber(["tenant", "create", "--name", label, "--json"]))
    json(yield* chamber(["user", "add", "--tenant", tenant.id, "--email", "ops@limits.example", "--role", "chamber_admin", "--json"]))
    const minted = json(
      yield* chamber(["key", "mint", "--tenant", tenant.id, "--as", "ops@limits.example", "--name", "k", "--scopes", "read", "--json", ...extra])
    )
    return { key: minted.key as string, prefix: minted.prefix as string, tenant: tenant.id as string }
  })

const me = (port: number, key: string) =>
  Effect.promise(async () => {
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/me`, { headers: { authorization: `Bearer ${key}` } })
    await res.arrayBuffer()
    return { status: res.status, policy: res.headers.get("ratelimit-policy"), fields: res.headers.get("ratelimit") }
  })

for (const rt of runtimes()) {
  describe(`rate limits in-process on ${rt.name}`, () => {
    layer(envLayer(rt), { timeout: 120_000, excludeTestServices: true })((it) => {
      it.effect("key usage shows both windows; set-limit holds from the next request; counts survive a restart", () =>
        Effect.gen(function*() {
          const { key, prefix, tenant } = yield* keyOf("Usage chamber", ["--daily-limit", "10"])
          let server = yield* serving(["--no-relay"])
          for (let i = 0; i < 6; i++) assert.strictEqual((yield* me(server.port, key)).status, 200)
          // The in-process store saves each second: `key usage` read until it shows the six.
          let usage = json(yield* chamber(["key", "usage", prefix, "--json"]))
          for (const deadline = Date.now() + 30_000; usage.minute.used < 6 && Date.now() < deadline;) {
            usage = json(yield* chamber(["key", "usage", prefix, "--json"]))
          }
          assert.strictEqual(usage.prefix, prefix)
          assert.strictEqual(usage.store, "in this process")
          assert.deepStrictEqual([usage.minute.used, usage.minute.limit, usage.minute.remaining], [6, 120, 114])
          assert.deepStrictEqual([usage.day.used, usage.day.limit, usage.day.remaining], [6, 10, 4])
          assert.isAtLeast(usage.minute.back_in_seconds, 55)
          const human = yield* chamber(["key", "usage", prefix])
          assert.match(human.stdout, /last minute: +6 of 120 used, 114 left/)
          assert.match(human.stdout, /last 24 hours: 6 of 10 used, 4 left/)

          const set = json(yield* chamber(["key", "set-limit", prefix, "--daily", "8", "--json"]))
          assert.deepStrictEqual(set.updated.map((k: { daily_limit: number }) => k.daily_limit), [8])
          const lowered = yield* me(server.port, key)
          assert.strictEqual(lowered.status, 200)
          assert.strictEqual(lowered.policy, `"minute";q=120;w=60, "day";q=8;w=86400`)
          assert.match(lowered.fields ?? "", /"day";r=1;/)

          // A restart goes on counting where the last process stopped.
          server.child.kill("SIGTERM")
          yield* Effect.promise(() => server.exited)
          server = yield* serving(["--no-relay"])
          assert.strictEqual((yield* me(server.port, key)).status, 200)
          const refused = yield* me(server.port, key)
          assert.strictEqual(refused.status, 429, "the eight of the day were counted before the restart too")
          assert.match(refused.fields ?? "", /"day";r=0;/)
          const listed = json(yield* chamber(["key", "list", "--tenant", tenant, "--json"]))
          assert.strictEqual(listed[0].daily_limit, 8)
          assert.isNotNull(listed[0].last_used_at)
        }))

      it.effect("bad input is refused with a clear message and exit code 1", () =>
        Effect.gen(function*() {
          const { prefix } = yield* keyOf("Bad input chamber")
          for (const daily of ["0", "-5", "1.5", "lots", "2147483648"]) {
            const r = yield* chamber(["key", "set-limit", prefix, "--daily", daily, "--json"])
            assert.strictEqual(r.code, 1, daily)
            assert.match(JSON.parse(r.stderr).error, /daily limit must be a whole number from 1 to 2147483647/, daily)
          }
          const missing = yield* chamber(["key", "usage", "cck_nothere0", "--json"])
          assert.strictEqual(missing.code, 1)
          assert.match(JSON.parse(missing.stderr).error, /No live key with the prefix cck_nothere0/)
          const badLimit = yield* chamber(["key", "usage", prefix, "--json"], { CHAMBER_RATE_LIMIT_PER_MINUTE: "fast" })
          assert.strictEqual(badLimit.code, 1)
          assert.match(JSON.parse(badLimit.stderr).error, /CHAMBER_RATE_LIMIT_PER_MINUTE must be a whole number/)
        }))
    })
  })
}

for (const rt of postgresOnly("rate limits shared through Redis on postgres")) {
  describe(`rate limits shared through Redis on ${rt.name}`, () => {
    layer(envLayer(rt), { timeout: 120_000 })((it) => {
      it.effect("two servers: exactly 120 of 300 concurrent requests admitted; key usage reads Redis; a revocation holds on both", () =>
        Effect.gen(function*() {
          const withRedis = { REDIS_URL }
          const { key, prefix } = yield* keyOf("Shared chamber")
          const a = yield* serving(["--no-relay"], withRedis)
          const b = yield* serving(["--no-relay"], withRedis)
          assert.match(a.stdout(), /counted Redis at 127\.0\.0\.1:\d+/)
          const replies = yield* Effect.forEach(
            Array.from({ length: 300 }, (_, i) => (i % 2 === 0 ? a.port : b.port)),
            (port) => me(port, key),
            { concurrency: "unbounded" }
          )
          assert.strictEqual(replies.filter((r) => r.status === 200).length, 120)
          assert.strictEqual(replies.filter((r) => r.status === 429).length, 180)
          const usage = json(yield* chamber(["key", "usage", prefix, "--json"], withRedis))
          assert.match(usage.store, /^Redis at /)
          assert.deepStrictEqual([usage.minute.used, usage.minute.remaining, usage.day.used], [120, 0, 120])

          json(yield* chamber(["key", "revoke", prefix, "--json"]))
          assert.strictEqual((yield* me(a.port, key)).status, 401)
          assert.strictEqual((yield* me(b.port, key)).status, 401)
        }))
    })
  })
}
