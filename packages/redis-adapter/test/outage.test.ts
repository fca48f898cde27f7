/**
 * Redis going away and coming back (docs/operations.md "When Redis is unreachable"), on a Redis
 * server of the test's own on a spare port, killed or behind a proxy that swallows or cuts: checks
 * go on being answered, limited by this instance alone; the outage is logged once; when Redis is
 * back the store uses it again by itself and says so once. A check whose command is in flight when
 * Redis goes silent is answered within its timeout; a connection that stays open and answers
 * nothing, or whose handshake is never answered, is given up, so checks stop waiting on it and
 * the store finds Redis again once it answers.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Metric from "effect/Metric"
import * as Logger from "effect/Logger"
import * as Scope from "effect/Scope"
import type { Limits } from "@chamber/core"
import { makeRedisStore } from "../src/index.ts"
import { redisProxy, redisServer } from "./harness.ts"

/** chamber_redis_errors_total as /metrics reports it. */
const redisErrors = Effect.map(Metric.snapshot, (all) =>
  all.filter((m) => m.id === "chamber_redis_errors_total").reduce((sum, m) => sum + Number((m.state as { readonly count: number }).count), 0))

const LIMITS: Limits = { perMinute: 10, daily: 1_000 }

/** A Redis server of the test's own, a proxy in front of it, a store through the proxy and one straight to Redis that never fails open. */
const behindProxy = Effect.gen(function*() {
  const redis = yield* Effect.acquireRelease(Effect.promise(redisServer), (r) => Effect.promise(r.kill))
  const proxy = yield* Effect.acquireRelease(Effect.promise(() => redisProxy(redis.url)), (p) => Effect.promise(p.close))
  const scope = yield* Effect.scope
  const store = yield* makeRedisStore({ url: proxy.url, timeoutMs: 250 }).pipe(Scope.provide(scope))
  const other = yield* makeRedisStore({ url: redis.url, timeoutMs: 250, failOpen: false }).pipe(Scope.provide(scope))
  return { redis, proxy, store, other }
})

describe("the Redis rate-limit store when Redis goes away", () => {
  const lines: Array<string> = []
  const capture = Logger.layer([Logger.map(Logger.formatSimple, (line) => void lines.push(String(line)))])

  it.live("answers throughout, limits on its own while Redis is down, logs each change once, and goes back by itself", () =>
    Effect.gen(function*() {
      const redis = yield* Effect.acquireRelease(Effect.promise(redisServer), (r) => Effect.promise(r.kill))
      const url = redis.url
      const scope = yield* Effect.scope
      const store = yield* makeRedisStore({ url, timeoutMs: 250 }).pipe(Scope.provide(scope))
      // A second instance sharing the Redis server: what it sees is what Redis holds.
      const other = yield* makeRedisStore({ url, timeoutMs: 250, failOpen: false }).pipe(Scope.provide(scope))
      const key = `outage-${Date.now()}`

      for (let i = 0; i < 3; i++) assert.isTrue((yield* store.hit(key, LIMITS)).admitted)
      assert.strictEqual((yield* other.peek(key, LIMITS)).minute.used, 3, "counted in Redis")

      const errorsBefore = yield* redisErrors
      yield* Effect.promise(redis.kill)
      const during = []
      for (let i = 0; i < 15; i++) during.push(yield* store.hit(key, LIMITS))
      assert.strictEqual((yield* redisErrors) - errorsBefore, 15, "each check Redis did not answer is counted (chamber_redis_errors_total)")
      assert.strictEqual(during.filter((v) => v.admitted).length, 10, "this instance alone holds the per-minute limit")
      assert.isAbove(during.at(-1)!.retryAfterMs, 0)
      const warnings = lines.filter((l) => l.includes("Redis does not answer"))
      assert.strictEqual(warnings.length, 1, `logged once per outage: ${lines.join("\n")}`)

      yield* Effect.promise(redis.start)
      // The client reconnects on its own (backing off up to 2 s); requests are answered meanwhile.
      let back = false
      for (let waited = 0; waited < 10_000 && !back; waited += 100) {
        yield* store.hit(key, LIMITS)
        back = lines.some((l) => l.includes("Redis answers again"))
        if (!back) yield* Effect.sleep(100)
      }
      assert.isTrue(back, `back on Redis by itself: ${lines.join("\n")}`)
      assert.strictEqual(lines.filter((l) => l.includes("Redis answers again")).length, 1)
      // The new server starts empty: the hit that found it counted there.
      yield* Effect.sleep(50)
      const fresh = `after-${Date.now()}`
      yield* store.hit(fresh, LIMITS)
      yield* store.hit(fresh, LIMITS)
      assert.strictEqual((yield* other.peek(fresh, LIMITS)).minute.used, 2, "counting in Redis again, seen by the other instance")
    }).pipe(Effect.provide(capture), Effect.scoped), { timeout: 30_000 })

  it.live("a command in flight when Redis goes silent is answered in time; after the cut the store goes back to Redis", () =>
    Effect.gen(function*() {
      lines.length = 0
      const { redis, proxy, store, other } = yield* behindProxy
      const key = `silent-${Date.now()}`
      assert.isTrue((yield* store.hit(key, LIMITS)).admitted)

      // Redis accepts the commands and never answers: each check waits its 250 ms, no longer.
      proxy.swallow()
      const started = Date.now()
      const verdicts = yield* Effect.forEach(Array.from({ length: 20 }), () => store.hit(key, LIMITS), { concurrency: "unbounded" })
      const took = Date.now() - started
      assert.isAbove(proxy.swallowedBytes(), 0, "the checks' commands reached the proxy and got no answer")
      assert.strictEqual(verdicts.filter((v) => v.admitted).length, 10, "limited on this instance alone meanwhile")
      assert.isBelow(took, 5_000, `every check answered without waiting on Redis (${took} ms)`)

      // The connection closes with those commands unanswered; Redis answers again behind it.
      proxy.cut()
      proxy.pass()
      let back = false
      for (const deadline = Date.now() + 10_000; Date.now() < deadline && !back;) {
        yield* store.hit(key, LIMITS)
        back = lines.some((l) => l.includes("Redis answers again"))
        if (!back) yield* Effect.sleep(100)
      }
      assert.isTrue(back, `back on Redis by itself: ${lines.join("\n")}`)
      const fresh = `after-silence-${Date.now()}`
      yield* store.hit(fresh, LIMITS)
      assert.strictEqual((yield* other.peek(fresh, LIMITS)).minute.used, 1, "counted in Redis again")
    }).pipe(Effect.provide(capture), Effect.scoped), { timeout: 30_000 })

  it.live("a connection that answers nothing is given up: checks stop waiting, and a swallowed handshake does not keep Redis away", () =>
    Effect.gen(function*() {
      lines.length = 0
      const { redis, proxy, store, other } = yield* behindProxy
      const key = `partition-${Date.now()}`
      assert.isTrue((yield* store.hit(key, LIMITS)).admitted)
      // An instance that stops during the partition, with a check unanswered.
      const stopping = yield* Scope.make()
      const stopped = yield* makeRedisStore({ url: proxy.url, timeoutMs: 250 }).pipe(Scope.provide(stopping))
      yield* stopped.hit(key, LIMITS)

      // A partition: the socket stays open and nothing comes back, for as long as it lasts. New
      // connections get through to the proxy, and their handshakes are swallowed too.
      proxy.swallow()
      for (const until = Date.now() + 2_000; Date.now() < until;) yield* store.hit(key, { perMinute: 1_000, daily: 100_000 })
      const started = Date.now()
      for (let i = 0; i < 20; i++) yield* store.hit(key, { perMinute: 1_000, daily: 100_000 })
      const took = Date.now() - started
      // Waiting on the silent connection, 20 checks would take 20 × 250 ms.
      assert.isBelow(took, 2_500, `once given up, checks do not wait on the silent connection (${took} ms for 20)`)

      yield* stopped.hit(key, LIMITS)
      const stopStarted = Date.now()
      yield* Scope.close(stopping, Exit.void)
      assert.isBelow(Date.now() - stopStarted, 5_000, "its connection closes without the replies it is owed")

      // The network heals; nothing closes the connection whose handshake was swallowed.
      proxy.pass()
      let back = false
      for (const deadline = Date.now() + 10_000; Date.now() < deadline && !back;) {
        yield* store.hit(key, LIMITS)
        back = lines.some((l) => l.includes("Redis answers again"))
        if (!back) yield* Effect.sleep(100)
      }
      assert.isTrue(back, `back on Redis by itself: ${lines.join("\n")}`)
      assert.strictEqual(lines.filter((l) => l.includes("Redis does not answer")).length, 2, "one outage, logged once by each of the two stores")
      const fresh = `after-partition-${Date.now()}`
      yield* store.hit(fresh, LIMITS)
      assert.strictEqual((yield* other.peek(fresh, LIMITS)).minute.used, 1, "counted in Redis again")
    }).pipe(Effect.provide(capture), Effect.scoped), { timeout: 30_000 })
})
