/**
 * The flags `chamber serve` sets once it has started (cli/src/ServingFlags.ts): with them, a small
 * function a server calls often is optimized by TurboFan within a few thousand calls, where V8's
 * default waits for some 24,000. Each case runs in a process of its own, with V8's natives syntax
 * to read the function's optimization status.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { runWithNatives } from "./natives.ts"

const CALLS = 8_000
/** V8's optimization status bit "TurboFan code" (`%GetOptimizationStatus`). */
const TURBOFANNED = 64

/** How many calls a small function took to run as TurboFan code, in a new process; 0 for not within CALLS. */
const callsToTurbofan = (serving: boolean) =>
  runWithNatives(
    "tiering",
    `${serving ? `import { setServingFlags } from ${JSON.stringify(new URL("../src/ServingFlags.ts", import.meta.url).href)}\nsetServingFlags()\n` : ""}
function lineTotal(line, invoice) { return line.quantity * line.unitPrice + invoice.rounding }
for (let call = 1; call <= ${CALLS}; call++) {
  lineTotal({ quantity: call, unitPrice: 3 }, { rounding: 0 })
  if (call % 100 !== 0) continue
  // Time for the compiler's background thread to finish what it was given.
  await new Promise((resolve) => setTimeout(resolve, 5))
  if (%GetOptimizationStatus(lineTotal) & ${TURBOFANNED}) { console.log(call); process.exit(0) }
}
console.log(0)
`
  ).pipe(Effect.map((stdout) => Number(stdout.trim())))

describe("serving flags", () => {
  it.effect("have a function a server calls often optimized by TurboFan within a few thousand calls, where V8's default waits longer", () =>
    Effect.gen(function*() {
      const [serving, defaults] = yield* Effect.all([callsToTurbofan(true), callsToTurbofan(false)], { concurrency: 2 })
      assert.isAbove(serving, 0, `with the serving flags, not optimized within ${CALLS} calls`)
      assert.isAtMost(serving, 6_000)
      assert.strictEqual(defaults, 0, `without them, optimized after ${defaults} calls: the serving flags change nothing here`)
    }), 30_000)
})
