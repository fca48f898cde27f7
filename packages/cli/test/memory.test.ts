/**
 * What `chamber serve` does with its start-up memory once it listens (bench/README.md "Idle
 * memory", "The start-up collection's price"): the young generation start-up grew is given back,
 * the command goes on, and no second V8 context is made for it (one made every later request
 * dearer for the life of the process), nor does it leave Node's `process.nextTick` dearer after it.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { getHeapSpaceStatistics, getHeapStatistics } from "node:v8"
import { settleMemory } from "../src/Memory.ts"
import { runWithNatives } from "./natives.ts"

const newSpaceMb = () => getHeapSpaceStatistics().find((space) => space.space_name === "new_space")!.space_size / 2 ** 20

/** Objects that live through a few young collections, as start-up's do, so V8 grows its young generation. */
const growYoungGeneration = () => {
  let kept: Array<Array<{ readonly n: number; readonly text: string }>> = []
  for (let round = 0; round < 40; round++) {
    kept.push(Array.from({ length: 20_000 }, (_, n) => ({ n, text: `row ${n} of ${round}` })))
    if (kept.length > 8) kept = kept.slice(1)
  }
}

describe("settleMemory", () => {
  it.effect("gives back the young generation start-up grew, in the same V8 context, and returns", () =>
    Effect.gen(function*() {
      growYoungGeneration()
      const before = { newSpace: newSpaceMb(), contexts: getHeapStatistics().number_of_native_contexts }
      assert.isAtLeast(before.newSpace, 8, "the young generation grew first")
      yield* settleMemory
      assert.isBelow(newSpaceMb(), before.newSpace / 2)
      assert.strictEqual(getHeapStatistics().number_of_native_contexts, before.contexts)
    }))
})

/**
 * The states of V8's inline caches for the symbol keys of Node's tick object literal, read from
 * `%DebugPrint(process.nextTick)` in a new process after `process.nextTick` ran 20,000 times,
 * then `settle` (a collection) and four bare collections, as V8 makes its own when a server
 * idles, each followed by 20,000 more. One bare collection forgets the tick objects' shape only
 * in some runs (about one in three on Node 24.21); once forgotten, the caches stay megamorphic,
 * so five collections show it in every run.
 */
const tickKeyCaches = (settle: "settleMemory" | "bare collection") =>
  runWithNatives(
    "tick-shape",
    `import * as Effect from ${JSON.stringify(import.meta.resolve("effect/Effect"))}
import { Session } from "node:inspector"
import { settleMemory } from ${JSON.stringify(new URL("../src/Memory.ts", import.meta.url).href)}
const ticks = (n) => new Promise((done) => { let i = 0; const next = () => (++i < n ? process.nextTick(next) : done()); next() })
const bareCollection = () => new Promise((done) => {
  const session = new Session()
  session.connect()
  session.post("HeapProfiler.collectGarbage", () => setImmediate(() => { session.disconnect(); done() }))
})
await ticks(20_000);
await ${settle === "settleMemory" ? "Effect.runPromise(settleMemory)" : "bareCollection()"};
await ticks(20_000);
for (let i = 0; i < 4; i++) { await bareCollection(); await ticks(20_000) }
%DebugPrint(process.nextTick);
`
  ).pipe(Effect.map((stdout) => [...stdout.matchAll(/DefineKeyedOwnPropertyInLiteral (\w+)/g)].map((m) => m[1]!)))

describe("settleMemory and Node's tick objects", () => {
  it.effect("leaves process.nextTick's inline caches as they were through later collections, where bare collections make them megamorphic", () =>
    Effect.gen(function*() {
      const [settled, bare] = yield* Effect.all([tickKeyCaches("settleMemory"), tickKeyCaches("bare collection")], { concurrency: 2 })
      assert.isAbove(bare.length, 0, "V8 printed no literal key caches for process.nextTick: the check cannot be read")
      assert.include(bare, "MEGAMORPHIC", "bare collections no longer make them megamorphic: the check shows nothing")
      assert.strictEqual(settled.length, bare.length)
      assert.deepStrictEqual(settled, settled.map(() => "MONOMORPHIC"))
    }), 30_000)
})
