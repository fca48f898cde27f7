/**
 * The fuzz suite in `pnpm test`: a fixed seed and a bounded count of generated hostile requests
 * against every endpoint of the contract, over a real socket, on every storage runtime. Never
 * a 5xx, never an empty body, every error in its documented shape (docs/api.md "Errors").
 * `pnpm fuzz` runs many more.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { runtimes } from "@chamber/pg-adapter/testing"
import { serverOn, serverUrl } from "./fixture.ts"
import { fuzz, fuzzTarget } from "./fuzz/fuzz.ts"

const SEED = 20261122
const COUNT = 2500

for (const rt of runtimes()) {
  describe(`fuzzing every endpoint on ${rt.name}`, () => {
    layer(serverOn(rt), { timeout: 120_000 })((it) => {
      it.effect(`${COUNT} generated requests (seed ${SEED}): no 5xx, no empty body, every error in its documented shape`, () =>
        Effect.gen(function*() {
          const port = Number(new URL(yield* serverUrl).port)
          const report = yield* fuzz({ port, target: yield* fuzzTarget, seed: SEED, count: COUNT, concurrency: 4 })
          const shown = report.failures.slice(0, 10).map((f) => `#${f.index} ${f.problem}\n    ${f.label}`)
          assert.deepStrictEqual(shown, [], `seed ${SEED}: ${report.failures.length} of ${report.sent} failed`)
          assert.strictEqual(report.sent, COUNT)
          console.log(`fuzz on ${rt.name}: statuses ${JSON.stringify(report.statuses)}`)
          // The run reached the handlers, not only what answers before them.
          assert.isAbove((report.statuses[200] ?? 0) + (report.statuses[201] ?? 0), COUNT / 20, JSON.stringify(report.statuses))
          assert.isAbove(report.statuses[422] ?? 0, COUNT / 20, JSON.stringify(report.statuses))
        }), { timeout: 120_000 })
    })
  })
}
