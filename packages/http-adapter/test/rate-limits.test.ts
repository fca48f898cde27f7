/**
 * Rate limits at the HTTP surface (docs/api.md "Rate limits", ruling 8), over a real socket with
 * the in-process store at the spec's 120 a minute, judged by a clock the test moves: exactly 120
 * of 300 concurrent requests admitted, both windows' fields on every answer to a valid key and
 * matching the real state, an exact Retry-After, a key's own daily ceiling, and invalid keys that
 * never spend a valid key's budget.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Keys, MemoryRateLimitStore, MINUTE_MS } from "@chamber/core"
import { runtimes } from "@chamber/pg-adapter/testing"
import { RateLimitPerMinute } from "../src/index.ts"
import { call, chamberWithKey, type Reply, serverOn } from "./fixture.ts"

/** The store's clock: still unless the test moves it. */
let now = 1_800_000_000_000 - (1_800_000_000_000 % MINUTE_MS)
const advance = (ms: number) => Effect.sync(() => void (now += ms))
const ManualClock: Clock.Clock = {
  currentTimeMillisUnsafe: () => now,
  currentTimeMillis: Effect.sync(() => now),
  currentTimeNanosUnsafe: () => BigInt(now) * 1_000_000n,
  currentTimeNanos: Effect.sync(() => BigInt(now) * 1_000_000n),
  monotonicTimeNanosUnsafe: () => process.hrtime.bigint(),
  monotonicTimeNanos: Effect.sync(() => process.hrtime.bigint()),
  sleep: (duration) => Effect.callback<void>((resume) => {
    const timer = setTimeout(() => resume(Effect.void), Duration.toMillis(duration))
    return Effect.sync(() => clearTimeout(timer))
  })
}

const SpecLimits = Layer.merge(
  MemoryRateLimitStore.pipe(Layer.provide(Layer.succeed(Clock.Clock)(ManualClock))),
  Layer.succeed(RateLimitPerMinute)(120)
)

const POLICY = (daily = 25_000) => `"minute";q=120;w=60, "day";q=${daily};w=86400`

/** The RateLimit field, read back: remaining and seconds-until-back of each window. */
const fields = (reply: Reply) => {
  const value = reply.headers["ratelimit"] ?? ""
  const match = /^"minute";r=(\d+);t=(\d+), "day";r=(\d+);t=(\d+)$/.exec(value)
  assert.isNotNull(match, `RateLimit: ${value}`)
  const [, mr, mt, dr, dt] = match!.map(Number)
  return { minute: { r: mr!, t: mt! }, day: { r: dr!, t: dt! } }
}

const me = (key: string) => call("GET", "/api/v1/me", { key })

for (const rt of runtimes()) {
  describe(`rate limits on ${rt.name}`, () => {
    layer(serverOn(rt, SpecLimits), { timeout: 120_000, excludeTestServices: true })((it) => {
      it.effect("300 concurrent requests with one key: exactly 120 admitted, the rest 429 with Retry-After", () =>
        Effect.gen(function*() {
          const { key } = yield* chamberWithKey("members:read")
          const replies = yield* Effect.forEach(Array.from({ length: 300 }), () => me(key), { concurrency: "unbounded" })
          const admitted = replies.filter((r) => r.status === 200)
          const refused = replies.filter((r) => r.status === 429)
          assert.strictEqual(admitted.length, 120)
          assert.strictEqual(refused.length, 180)
          for (const r of replies) assert.strictEqual(r.headers["ratelimit-policy"], POLICY(), "every answer carries the policy")
          for (const r of refused) {
            assert.deepStrictEqual(r.body, { message: "Too many requests." })
            assert.strictEqual(r.headers["retry-after"], "60", "all 120 were admitted at this instant: one leaves in 60 s")
            assert.deepStrictEqual(fields(r).minute, { r: 0, t: 60 })
            assert.strictEqual(fields(r).day.r, 25_000 - 120)
          }
          assert.sameMembers(admitted.map((r) => fields(r).minute.r), Array.from({ length: 120 }, (_, i) => i))
        }))

      it.effect("the fields follow the real state of both windows", () =>
        Effect.gen(function*() {
          const { key } = yield* chamberWithKey("members:read")
          const first = fields(yield* me(key))
          assert.deepStrictEqual(first, { minute: { r: 119, t: 60 }, day: { r: 24_999, t: 86_400 } })
          yield* advance(18_000)
          yield* me(key)
          const third = fields(yield* me(key))
          assert.deepStrictEqual(third.minute, { r: 117, t: 42 }, "the first request leaves the minute in 42 s")
          assert.strictEqual(third.day.r, 24_997)
          yield* advance(42_000)
          assert.deepStrictEqual(fields(yield* me(key)).minute, { r: 117, t: 18 }, "the first left as this one came; the next leaves in 18 s")
        }))

      it.effect("Retry-After is exact: a second earlier is refused, a retry at it is admitted; refused requests are not counted", () =>
        Effect.gen(function*() {
          const { key } = yield* chamberWithKey("members:read")
          for (let i = 0; i < 120; i++) assert.strictEqual((yield* me(key)).status, 200)
          yield* advance(30_500)
          const refused = yield* me(key)
          assert.strictEqual(refused.status, 429)
          assert.strictEqual(refused.headers["retry-after"], "30")
          for (let i = 0; i < 20; i++) assert.strictEqual((yield* me(key)).status, 429)
          yield* advance(29_000)
          const early = yield* me(key)
          assert.strictEqual(early.status, 429, "one second before Retry-After")
          assert.strictEqual(early.headers["retry-after"], "1")
          yield* advance(1_000)
          const retry = yield* me(key)
          assert.strictEqual(retry.status, 200, "a retry at Retry-After")
          assert.strictEqual(fields(retry).minute.r, 119, "the 120, admitted together, left together")
          assert.strictEqual(fields(retry).day.r, 25_000 - 121, "the 21 refused requests were not counted")
        }))

      it.effect("invalid keys never spend a valid key's budget, and get no rate-limit fields", () =>
        Effect.gen(function*() {
          const { key } = yield* chamberWithKey("members:read")
          const near = key.slice(0, -1) + (key.endsWith("a") ? "b" : "a")
          for (const bad of [near, "cck_short", key.toUpperCase(), "not-a-key"]) {
            const reply = yield* me(bad)
            assert.strictEqual(reply.status, 401)
            assert.isUndefined(reply.headers["ratelimit"])
            assert.isUndefined(reply.headers["ratelimit-policy"])
          }
          assert.deepStrictEqual(fields(yield* me(key)).minute, { r: 119, t: 60 })
        }))

      it.effect("every answer to a valid key carries both fields and counts, a 403, 404 and 422 included", () =>
        Effect.gen(function*() {
          const { key } = yield* chamberWithKey("members:read")
          const answers = [
            yield* call("GET", "/api/v1/members", { key }),
            yield* call("POST", "/api/v1/members", { key, body: { name: "X" } }),
            yield* call("GET", "/api/v1/members/999999", { key }),
            yield* call("GET", "/api/v1/members?page=0", { key }),
            yield* call("GET", "/api/v1/events", { key })
          ]
          assert.deepStrictEqual(answers.map((r) => r.status), [200, 403, 404, 422, 403])
          assert.deepStrictEqual(answers.map((r) => fields(r).minute.r), [119, 118, 117, 116, 115])
          for (const r of answers) assert.strictEqual(r.headers["ratelimit-policy"], POLICY())
        }))

      it.effect("answers given before any endpoint (unknown path, wrong method, body over 1 MiB) count and carry the fields too", () =>
        Effect.gen(function*() {
          const { key } = yield* chamberWithKey("members:read")
          const answers = [
            yield* call("GET", "/api/v1/nothing-here", { key }),
            yield* call("PUT", "/api/v1/members", { key }),
            yield* call("POST", "/api/v1/members", { key, body: "x".repeat(1024 * 1024 + 1) }),
            yield* call("GET", "/api/v1/members/%61", { key })
          ]
          assert.deepStrictEqual(answers.map((r) => r.status), [404, 405, 413, 404])
          assert.deepStrictEqual(answers.map((r) => fields(r).minute.r), [119, 118, 117, 116])
          for (const r of answers) assert.strictEqual(r.headers["ratelimit-policy"], POLICY())
          const anonymous = yield* call("PUT", "/api/v1/members")
          assert.strictEqual(anonymous.status, 405)
          assert.isUndefined(anonymous.headers["ratelimit"], "no key, nothing to count")
          for (let i = 0; i < 116; i++) yield* me(key)
          const refused = yield* call("PUT", "/api/v1/members", { key })
          assert.deepStrictEqual([refused.status, refused.body], [429, { message: "Too many requests." }])
          assert.strictEqual(refused.headers["retry-after"], "60")
        }))

      it.effect("a key's own daily ceiling: refused once reached with Retry-After, raised with effect from the next request", () =>
        Effect.gen(function*() {
          const keys = yield* Keys
          const { minted, tenant } = yield* chamberWithKey("members:read")
          const small = yield* keys.mint({ tenant: tenant.id, asEmail: "admin@chamber.example", name: "Small", scopes: "read", dailyLimit: 5 })
          for (let i = 0; i < 5; i++) {
            const ok = yield* me(small.key)
            assert.strictEqual(ok.status, 200)
            assert.strictEqual(ok.headers["ratelimit-policy"], POLICY(5))
          }
          const refused = yield* me(small.key)
          assert.strictEqual(refused.status, 429)
          assert.strictEqual(refused.headers["retry-after"], "86400")
          assert.deepStrictEqual(fields(refused).day, { r: 0, t: 86_400 })
          assert.strictEqual(fields(refused).minute.r, 115, "the minute still has room: the day refused it")
          assert.strictEqual((yield* me(minted.key)).status, 200, "another key of the chamber is not held back")
          yield* keys.setDailyLimit(small.prefix, 7).pipe(Effect.orDie)
          const raised = yield* me(small.key)
          assert.strictEqual(raised.status, 200)
          assert.strictEqual(raised.headers["ratelimit-policy"], POLICY(7))
          assert.strictEqual(fields(raised).day.r, 1)
        }))

      it.effect("a revoked key answers 401 from its next request", () =>
        Effect.gen(function*() {
          const { key, minted } = yield* chamberWithKey("members:read")
          assert.strictEqual((yield* me(key)).status, 200)
          yield* (yield* Keys).revoke(minted.prefix).pipe(Effect.orDie)
          const after = yield* me(key)
          assert.deepStrictEqual([after.status, after.body], [401, { message: "Unauthenticated." }])
        }))
    })
  })
}
