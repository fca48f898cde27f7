/**
 * The Redis rate-limit store against the store contract, and its keys' expiry, on the Redis server
 * of REDIS_URL. With CI=true it must be set; locally, without it, the suite is reported skipped and
 * says so loudly.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { createClient } from "redis"
import { DAY_MS, MINUTE_MS } from "@chamber/core"
import { rateLimitContract } from "@chamber/core/test/rate-limit-contract"
import { makeRedisStore, RedisRateLimitStore } from "../src/index.ts"

const REDIS_URL = process.env.REDIS_URL ?? ""
const ci = process.env.CI === "true" || process.env.CI === "1"

if (REDIS_URL === "") {
  const message = "REDIS_URL is not set: the Redis store suite needs a Redis server."
  if (ci) throw new Error(`${message} CI must not skip it.`)
  console.warn(`\n*** ${message} It did NOT run. Set REDIS_URL=redis://127.0.0.1:6379 to run it. ***\n`)
  describe.skip("the Redis rate-limit store", () => {
    it.skip("skipped: REDIS_URL is not set; set REDIS_URL=redis://127.0.0.1:6379 to run it on Redis", () => {})
  })
} else {
  rateLimitContract("Redis", RedisRateLimitStore({ url: REDIS_URL, clock: "caller", failOpen: false, timeoutMs: 5_000 }))
}

describe.skipIf(REDIS_URL === "")("the Redis store's counts expire", () => {
  it.live("every Redis key of an API key lives a day and a minute after its last admitted request, no longer", () =>
    Effect.gen(function*() {
      const client = createClient({ url: REDIS_URL })
      yield* Effect.acquireRelease(Effect.promise(() => client.connect()), () => Effect.promise(() => client.close()))
      const store = yield* makeRedisStore({ url: REDIS_URL, failOpen: false, prefix: "test:rl:" })
      const key = `expiry-${process.pid}-${Date.now()}`
      assert.isTrue((yield* store.hit(key, { perMinute: 120, daily: 1_000 })).admitted)
      const names = yield* Effect.promise(() => client.keys(`test:rl:{${key}}:*`))
      assert.strictEqual(names.length, 3)
      for (const name of names) {
        const ttl = yield* Effect.promise(() => client.pTTL(name))
        assert.isAbove(ttl, DAY_MS + MINUTE_MS - 5_000, name)
        assert.isAtMost(ttl, DAY_MS + MINUTE_MS, name)
      }
    }).pipe(Effect.scoped))
})
