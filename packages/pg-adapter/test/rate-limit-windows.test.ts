/**
 * The in-process rate-limit store's saved windows (docs/operations.md "Rate limits") on every
 * storage runtime: saved and read back per key, replaced by the next save, and forgotten once
 * nothing of them is left in the day, so the table does not grow forever.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { DAY_MS, MINUTE_MS, RateLimitSnapshots } from "@chamber/core"
import { StorageLive } from "../src/index.ts"
import { onDatabase, runtimes } from "./harness.ts"

for (const rt of runtimes()) {
  describe(`saved rate-limit windows on ${rt.name}`, () => {
    layer(onDatabase(rt, (config) => StorageLive(config)), { timeout: 120_000 })((it) => {
      it.effect("saved, replaced, read per key, and forgotten a day and a minute after their latest request", () =>
        Effect.gen(function*() {
          const snapshots = yield* RateLimitSnapshots
          const t = 1_800_000_000_000
          yield* snapshots.save([
            { key: "chm_a:1", buckets: [{ minute: t / MINUTE_MS, count: 3, last: t + 5_000 }] },
            { key: "chm_b:2", buckets: [{ minute: t / MINUTE_MS + 10, count: 1, last: t + 600_000 }] }
          ], t + 600_000)
          yield* snapshots.save([{ key: "chm_a:1", buckets: [{ minute: t / MINUTE_MS, count: 4, last: t + 7_000 }] }], t + 600_000)
          assert.deepStrictEqual(yield* snapshots.load("chm_a:1"), [{ key: "chm_a:1", buckets: [{ minute: t / MINUTE_MS, count: 4, last: t + 7_000 }] }])
          assert.strictEqual((yield* snapshots.load()).length, 2)
          // chm_a:1's latest request leaves the day at t + 7 s + 24 h + 1 min; chm_b:2's ten minutes later.
          yield* snapshots.save([], t + 7_000 + DAY_MS + MINUTE_MS)
          assert.deepStrictEqual((yield* snapshots.load()).map((w) => w.key), ["chm_b:2"])
        }))
    })
  })
}
