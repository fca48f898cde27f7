/**
 * The contract every rate-limit store passes (docs/operations.md "Rate limits"), on a controlled
 * clock: true rolling windows, exact retry times, bounded by both windows, nothing counted by a
 * peek, keys independent. Run by the in-process store's tests here and by redis-adapter's.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import { TestClock } from "effect/testing"
import { DAY_MS, type Limits, MINUTE_MS, RateLimitStore, type Verdict } from "../src/index.ts"

const SPEC: Limits = { perMinute: 120, daily: 25_000 }

let serial = 0
/** A key no other test (or earlier run against a shared Redis) has used. */
const freshKey = () => `test-${process.pid}-${Date.now().toString(36)}-${serial++}`

/** Admitted times of a random stream of requests, to check a window's bound at every admission. */
const maxInAnyWindow = (admitted: ReadonlyArray<number>, windowMs: number): number => {
  let most = 0
  let from = 0
  for (let i = 0; i < admitted.length; i++) {
    while (admitted[from]! + windowMs <= admitted[i]!) from++
    most = Math.max(most, i - from + 1)
  }
  return most
}

/** A deterministic pseudo-random sequence (the same on every store). */
const lcg = (seed: number) => () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648
  return seed / 2_147_483_648
}

export const rateLimitContract = (name: string, store: Layer.Layer<RateLimitStore>) =>
  describe(`rate-limit store contract: ${name}`, () => {
    const run = <A>(body: (hit: (key: string, limits?: Limits) => Effect.Effect<Verdict>) => Effect.Effect<A, never, RateLimitStore>) =>
      Effect.gen(function*() {
        const s = yield* RateLimitStore
        return yield* body((key, limits = SPEC) => s.hit(key, limits))
      }).pipe(Effect.provide(store))

    it.effect("120 spread over a minute: the 121st is refused until the oldest leaves, then admitted exactly then", () =>
      run(Effect.fnUntraced(function*(hit) {
        const key = freshKey()
        yield* TestClock.setTime(1_000_000)
        for (let i = 0; i < 120; i++) {
          const v = yield* hit(key)
          assert.isTrue(v.admitted, `request ${i + 1}`)
          assert.strictEqual(v.minute.used, i + 1)
          yield* TestClock.adjust(i < 119 ? 495 : 0)
        }
        // t = 1,000,000 + 119 * 495 = 1,058,905: the oldest (1,000,000) leaves at 1,060,000.
        const refused = yield* hit(key)
        assert.isFalse(refused.admitted)
        assert.strictEqual(refused.minute.used, 120)
        assert.strictEqual(refused.retryAfterMs, 1_095)
        yield* TestClock.setTime(1_059_999)
        assert.isFalse((yield* hit(key)).admitted, "one millisecond before the oldest leaves")
        yield* TestClock.setTime(1_060_000)
        const back = yield* hit(key)
        assert.isTrue(back.admitted, "as the oldest leaves")
        assert.strictEqual(back.minute.used, 120)
        // Next to leave: the second request, at 1,000,495 + 60,000.
        const again = yield* hit(key)
        assert.isFalse(again.admitted)
        assert.strictEqual(again.retryAfterMs, 495)
      })))

    it.effect("a burst at the end of one minute and the start of the next never admits more than 120 in 60 s", () =>
      run(Effect.fnUntraced(function*(hit) {
        const key = freshKey()
        yield* TestClock.setTime(59_000 + 60_000)
        let first = 0
        for (let i = 0; i < 150; i++) if ((yield* hit(key)).admitted) first++
        yield* TestClock.setTime(61_000 + 60_000)
        let second = 0
        for (let i = 0; i < 150; i++) if ((yield* hit(key)).admitted) second++
        assert.strictEqual(first, 120)
        assert.strictEqual(second, 0, "a fixed window would admit 120 more here")
        yield* TestClock.setTime(119_000 + 60_000)
        assert.isTrue((yield* hit(key)).admitted, "all 120 left at 59 s + 60 s")
      })))

    it.effect("random traffic: at most 120 in any 60 s and at most the ceiling in any 24 h, and a retry at Retry-After is admitted", () =>
      run(Effect.fnUntraced(function*(hit) {
        const key = freshKey()
        const limits: Limits = { perMinute: 20, daily: 150 }
        const random = lcg(42)
        const admitted: Array<number> = []
        let now = 5_000_000
        yield* TestClock.setTime(now)
        let retriesChecked = 0
        for (let i = 0; i < 1_500; i++) {
          // Bursts and pauses: mostly milliseconds apart, sometimes minutes or hours.
          const r = random()
          now += r < 0.8 ? Math.floor(random() * 400) : r < 0.97 ? Math.floor(random() * 120_000) : Math.floor(random() * 6 * 3_600_000)
          yield* TestClock.setTime(now)
          const v = yield* hit(key, limits)
          if (v.admitted) {
            admitted.push(now)
          } else if (random() < 0.2) {
            assert.isAbove(v.retryAfterMs, 0)
            now += Math.ceil(v.retryAfterMs / 1000) * 1000
            yield* TestClock.setTime(now)
            const retry = yield* hit(key, limits)
            assert.isTrue(retry.admitted, `a retry after Retry-After is admitted (request ${i})`)
            admitted.push(now)
            retriesChecked++
          }
        }
        assert.isAtMost(maxInAnyWindow(admitted, MINUTE_MS), 20)
        assert.isAtMost(maxInAnyWindow(admitted, DAY_MS), 150)
        assert.isAbove(retriesChecked, 10)
        assert.isAbove(admitted.length, 300)
      })))

    it.effect("the daily ceiling (a small override): refused once reached, back 24 h after the minute's latest request", () =>
      run(Effect.fnUntraced(function*(hit) {
        const key = freshKey()
        const limits: Limits = { perMinute: 120, daily: 5 }
        yield* TestClock.setTime(10 * MINUTE_MS)
        for (let i = 0; i < 5; i++) {
          assert.isTrue((yield* hit(key, limits)).admitted)
          yield* TestClock.adjust(1_000)
        }
        // The five were at 0..4 s into the minute; now is 5 s.
        const refused = yield* hit(key, limits)
        assert.isFalse(refused.admitted)
        assert.strictEqual(refused.day.used, 5)
        assert.strictEqual(refused.retryAfterMs, DAY_MS - 1_000)
        assert.strictEqual(refused.minute.used, 5, "a refused request is not counted")
        yield* TestClock.setTime(10 * MINUTE_MS + DAY_MS + 4_000 - 1)
        assert.isFalse((yield* hit(key, limits)).admitted)
        yield* TestClock.setTime(10 * MINUTE_MS + DAY_MS + 4_000)
        const back = yield* hit(key, limits)
        assert.isTrue(back.admitted)
        assert.strictEqual(back.day.used, 1)
      })))

    it.effect("both windows reported: used and when quota is back", () =>
      run(Effect.fnUntraced(function*(hit) {
        const key = freshKey()
        yield* TestClock.setTime(3 * DAY_MS)
        yield* hit(key)
        yield* TestClock.adjust(18_000)
        yield* hit(key)
        const v = yield* hit(key)
        assert.deepStrictEqual(v.minute, { limit: 120, used: 3, backInMs: 42_000 })
        assert.deepStrictEqual(v.day, { limit: 25_000, used: 3, backInMs: DAY_MS })
        assert.strictEqual(v.retryAfterMs, 0)
      })))

    it.effect("a peek counts nothing; keys are independent; a lowered limit refuses until enough leave", () =>
      Effect.gen(function*() {
        const s = yield* RateLimitStore
        const [a, b] = [freshKey(), freshKey()]
        yield* TestClock.setTime(7 * DAY_MS)
        for (let i = 0; i < 10; i++) yield* s.hit(a, SPEC)
        const peeked = yield* s.peek(a, SPEC)
        assert.isTrue(peeked.admitted)
        assert.strictEqual(peeked.minute.used, 10)
        assert.strictEqual((yield* s.peek(a, SPEC)).minute.used, 10)
        assert.strictEqual((yield* s.peek(b, SPEC)).minute.used, 0)
        assert.strictEqual((yield* s.hit(b, SPEC)).minute.used, 1)
        const lowered = yield* s.hit(a, { perMinute: 4, daily: 25_000 })
        assert.isFalse(lowered.admitted)
        assert.strictEqual(lowered.minute.used, 4)
        assert.strictEqual(lowered.retryAfterMs, MINUTE_MS)
      }).pipe(Effect.provide(store)))
  })
