import { assert, describe, it } from "@effect/vitest"
import {
  ATTEMPTS_PER_DELIVERY,
  DeliveryConfigError,
  deliverySettingsFromEnv,
  MAX_RETRY_AFTER_MS,
  nextAttemptDelay,
  parseDuration,
  parseHttpDate,
  parseRetryAfter,
  parseRetryDelays,
  parseTimeout,
  RETRIES_PER_DELIVERY
} from "../src/index.ts"

const MIN = 60_000
const HOUR = 60 * MIN

describe("retry configuration", () => {
  it("a delivery is one attempt and 3 retries", () => {
    assert.strictEqual(RETRIES_PER_DELIVERY, 3)
    assert.strictEqual(ATTEMPTS_PER_DELIVERY, 4)
  })

  it("parses durations in ms, s, m, h and d", () => {
    assert.strictEqual(parseDuration("250ms"), 250)
    assert.strictEqual(parseDuration("10s"), 10_000)
    assert.strictEqual(parseDuration("1.5s"), 1500)
    assert.strictEqual(parseDuration("30m"), 30 * MIN)
    assert.strictEqual(parseDuration("6h"), 6 * HOUR)
    assert.strictEqual(parseDuration("1d"), 24 * HOUR)
    assert.strictEqual(parseDuration(" 2m "), 2 * MIN)
    for (const bad of ["", "10", "s", "10 s", "-1s", "1w", "1M", "1e3s", "ten s", "1m30s", "0x10s"]) {
      assert.isUndefined(parseDuration(bad), bad)
    }
  })

  it("CHAMBER_WEBHOOK_RETRY_DELAYS: the default is 1m,30m,6h; otherwise exactly the 3 delays given, in order", () => {
    assert.deepStrictEqual(parseRetryDelays(undefined), [MIN, 30 * MIN, 6 * HOUR])
    assert.deepStrictEqual(parseRetryDelays(""), [MIN, 30 * MIN, 6 * HOUR])
    assert.deepStrictEqual(parseRetryDelays("1s,2s,3s"), [1000, 2000, 3000])
    assert.deepStrictEqual(parseRetryDelays("2h, 10ms ,1d"), [2 * HOUR, 10, 24 * HOUR])
    assert.deepStrictEqual(parseRetryDelays("0s,0s,0s"), [0, 0, 0])
  })

  it("CHAMBER_WEBHOOK_RETRY_DELAYS: a bad value is a clear error naming the variable and the bad item", () => {
    const error = (text: string) => {
      try {
        parseRetryDelays(text)
      } catch (e) {
        assert.instanceOf(e, DeliveryConfigError)
        return (e as Error).message
      }
      return assert.fail(`"${text}" was accepted`)
    }
    assert.match(error("1m,30x,6h"), /^CHAMBER_WEBHOOK_RETRY_DELAYS must be 3 comma-separated durations.*"30x" is not a duration/)
    assert.match(error("1m,30m"), /it lists 2/)
    assert.match(error("1m,30m,6h,1d"), /it lists 4/)
    assert.match(error("1m,,6h"), /"" is not a duration/)
    assert.match(error("60"), /"60" is not a duration/)
  })

  it("CHAMBER_WEBHOOK_TIMEOUT: default 10s, a duration above 0", () => {
    assert.strictEqual(parseTimeout(undefined), 10_000)
    assert.strictEqual(parseTimeout("500ms"), 500)
    assert.strictEqual(parseTimeout("2m"), 2 * MIN)
    assert.throws(() => parseTimeout("0s"), DeliveryConfigError, /CHAMBER_WEBHOOK_TIMEOUT must be a duration above 0.*"0s"/)
    assert.throws(() => parseTimeout("10"), DeliveryConfigError, /"10"/)
    assert.throws(() => parseTimeout("soon"), DeliveryConfigError, /"soon"/)
  })
})

describe("deliverySettingsFromEnv", () => {
  it("reads the four variables, with their defaults", () => {
    assert.deepStrictEqual(deliverySettingsFromEnv({}), {
      retryDelaysMs: [MIN, 30 * MIN, 6 * HOUR],
      timeoutMs: 10_000,
      allowPrivate: false,
      retentionMs: 30 * 24 * HOUR
    })
    assert.deepStrictEqual(
      deliverySettingsFromEnv({
        CHAMBER_WEBHOOK_RETRY_DELAYS: "1s,2s,3s",
        CHAMBER_WEBHOOK_TIMEOUT: "2s",
        CHAMBER_WEBHOOK_ALLOW_PRIVATE: "true",
        CHAMBER_WEBHOOK_RETENTION: "7d"
      }),
      { retryDelaysMs: [1000, 2000, 3000], timeoutMs: 2000, allowPrivate: true, retentionMs: 7 * 24 * HOUR }
    )
    assert.throws(() => deliverySettingsFromEnv({ CHAMBER_WEBHOOK_RETENTION: "forever" }), /CHAMBER_WEBHOOK_RETENTION/)
    assert.throws(() => deliverySettingsFromEnv({ CHAMBER_WEBHOOK_TIMEOUT: "fast" }), /CHAMBER_WEBHOOK_TIMEOUT/)
    assert.throws(() => deliverySettingsFromEnv({ CHAMBER_WEBHOOK_ALLOW_PRIVATE: "1" }), /CHAMBER_WEBHOOK_ALLOW_PRIVATE/)
  })

  it("CHAMBER_WEBHOOK_LEASE: any duration of a second or more, shorter than the timeout too (the relay renews it while it sends)", () => {
    assert.strictEqual(deliverySettingsFromEnv({ CHAMBER_WEBHOOK_LEASE: "5s" }).leaseMs, 5_000)
    assert.strictEqual(deliverySettingsFromEnv({ CHAMBER_WEBHOOK_LEASE: "1s", CHAMBER_WEBHOOK_TIMEOUT: "30s" }).leaseMs, 1_000)
    assert.throws(() => deliverySettingsFromEnv({ CHAMBER_WEBHOOK_LEASE: "500ms" }), /CHAMBER_WEBHOOK_LEASE must be a duration of at least 1s/)
    assert.throws(() => deliverySettingsFromEnv({ CHAMBER_WEBHOOK_LEASE: "soon" }), /CHAMBER_WEBHOOK_LEASE/)
  })
})

describe("nextAttemptDelay", () => {
  it("is the configured delay of that retry, +-20% jitter, the bounds reached at the extremes of random", () => {
    const delays = [MIN, 30 * MIN, 6 * HOUR]
    delays.forEach((delay, i) => {
      assert.strictEqual(nextAttemptDelay(i, { random: () => 0 }), delay * 0.8)
      assert.strictEqual(nextAttemptDelay(i, { random: () => 0.5 }), delay)
      const top = nextAttemptDelay(i, { random: () => 0.999999 })
      assert.isTrue(top <= delay * 1.2 && top > delay * 1.199, String(top))
    })
    for (let n = 0; n < 1000; n++) {
      const d = nextAttemptDelay(1)
      assert.isTrue(d >= 24 * MIN && d <= 36 * MIN, String(d))
    }
  })

  it("uses the configured delays when given", () => {
    assert.strictEqual(nextAttemptDelay(2, { delaysMs: [1000, 2000, 3000], random: () => 0.5 }), 3000)
    assert.strictEqual(nextAttemptDelay(0, { delaysMs: [1000, 2000, 3000], random: () => 0 }), 800)
  })

  it("there is no retry after the third", () => {
    assert.throws(() => nextAttemptDelay(3), RangeError)
    assert.throws(() => nextAttemptDelay(-1), RangeError)
    assert.throws(() => nextAttemptDelay(0.5), RangeError)
  })

  it("a Retry-After longer than the jittered delay pushes the retry to it; a shorter one changes nothing", () => {
    // first retry: 1 min +-20%
    assert.strictEqual(nextAttemptDelay(0, { random: () => 0.5, retryAfterSeconds: 600 }), 600_000)
    assert.strictEqual(nextAttemptDelay(0, { random: () => 0.5, retryAfterSeconds: 5 }), MIN)
    assert.strictEqual(nextAttemptDelay(0, { random: () => 1, retryAfterSeconds: 70 }), 72_000)
    assert.strictEqual(nextAttemptDelay(0, { random: () => 0.5, retryAfterSeconds: null }), MIN)
    assert.strictEqual(nextAttemptDelay(0, { random: () => 0.5, retryAfterSeconds: 0 }), MIN)
  })

  it("a Retry-After counts for at most 24 h", () => {
    assert.strictEqual(MAX_RETRY_AFTER_MS, 24 * HOUR)
    assert.strictEqual(nextAttemptDelay(2, { random: () => 0.5, retryAfterSeconds: 3 * 24 * 3600 }), 24 * HOUR)
    assert.strictEqual(nextAttemptDelay(0, { random: () => 0.5, retryAfterSeconds: Number.MAX_SAFE_INTEGER }), 24 * HOUR)
    assert.strictEqual(nextAttemptDelay(0, { random: () => 0.5, retryAfterSeconds: 24 * 3600 + 1 }), 24 * HOUR)
  })
})

describe("parseRetryAfter", () => {
  const now = new Date("2026-11-22T10:00:00.000Z")

  it("reads delay-seconds", () => {
    assert.strictEqual(parseRetryAfter("5", now), 5)
    assert.strictEqual(parseRetryAfter(" 120 ", now), 120)
    assert.strictEqual(parseRetryAfter("0", now), 0)
    assert.strictEqual(parseRetryAfter(["30", "60"], now), 30)
    assert.strictEqual(parseRetryAfter("99999999999999999999999", now), Number.MAX_SAFE_INTEGER)
  })

  it("reads an HTTP-date in its three forms, seconds from now rounded up, a past date giving 0", () => {
    assert.strictEqual(parseRetryAfter("Sun, 22 Nov 2026 10:05:00 GMT", now), 300)
    assert.strictEqual(parseRetryAfter("Sunday, 22-Nov-26 10:05:00 GMT", now), 300)
    assert.strictEqual(parseRetryAfter("Sun Nov 22 10:05:00 2026", now), 300)
    assert.strictEqual(parseRetryAfter("Tue, 01 Dec 2026 08:09:07 GMT", new Date("2026-12-01T08:09:06.500Z")), 1)
    assert.strictEqual(parseRetryAfter("Sun, 22 Nov 2026 09:00:00 GMT", now), 0)
    assert.strictEqual(parseHttpDate("Sun Nov  2 10:05:00 2026"), Date.UTC(2026, 10, 2, 10, 5, 0))
  })

  it("ignores garbage: absent, empty, negative, fractional, other date shapes, impossible dates", () => {
    for (const bad of [
      undefined,
      "",
      "   ",
      "-5",
      "1.5",
      "5s",
      "soon",
      "0x10",
      "2026-11-22T10:05:00Z",
      "22 Nov 2026 10:05:00 GMT",
      "Sun, 22 Nov 2026 10:05:00 PST",
      "Sun, 31 Feb 2026 10:05:00 GMT",
      "Sun, 22 Nov 2026 25:05:00 GMT",
      "Sun, 22 Foo 2026 10:05:00 GMT"
    ]) {
      assert.isUndefined(parseRetryAfter(bad, now), String(bad))
    }
  })
})
