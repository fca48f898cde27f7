/** The in-process rate-limit store against the store contract, and its windows across a restart. */
import { assert, describe, it } from "@effect/vitest"
import { DAY_MS, KeyWindows, MemoryRateLimitStore, MINUTE_MS } from "../src/index.ts"
import { rateLimitContract } from "./rateLimitContract.ts"

rateLimitContract("in-process", MemoryRateLimitStore)

describe("windows restored from what was saved (a restart of the in-process store)", () => {
  it("never admit more than the windows they came from would: random traffic with a restart every 200 requests", () => {
    const limits = { perMinute: 20, daily: 150 }
    let seed = 7
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648
    let windows = new KeyWindows()
    const admitted: Array<number> = []
    let now = 1_000_000
    for (let i = 0; i < 3_000; i++) {
      const r = random()
      now += r < 0.8 ? Math.floor(random() * 500) : r < 0.97 ? Math.floor(random() * 90_000) : Math.floor(random() * 5 * 3_600_000)
      if (windows.hit(now, limits).admitted) admitted.push(now)
      if (i % 200 === 199) windows = KeyWindows.restore(windows.saved(), limits.perMinute)
    }
    const most = (windowMs: number) => {
      let best = 0
      for (let i = 0, from = 0; i < admitted.length; i++) {
        while (admitted[from]! + windowMs <= admitted[i]!) from++
        best = Math.max(best, i - from + 1)
      }
      return best
    }
    assert.isAtMost(most(MINUTE_MS), 20)
    assert.isAtMost(most(DAY_MS), 150)
    assert.isAbove(admitted.length, 500)
  })

  it("a restart right after a full minute still refuses, and admits again once that minute has passed", () => {
    const limits = { perMinute: 5, daily: 100 }
    const before = new KeyWindows()
    for (let t = 0; t < 5; t++) before.hit(60_000 + t * 1_000, limits)
    const after = KeyWindows.restore(before.saved(), limits.perMinute)
    const refused = after.hit(65_000, limits)
    assert.isFalse(refused.admitted)
    assert.strictEqual(refused.day.used, 5)
    // Saved by the minute: the five count as made at the last one's time (64 s), leaving at 124 s.
    assert.strictEqual(refused.retryAfterMs, 59_000)
    assert.isTrue(after.hit(124_000, limits).admitted)
  })
})
