/**
 * What `chamber serve` does with its start-up memory once it listens (bench/README.md "Idle
 * memory", "The start-up collection's price"): the young generation start-up grew is given back,
 * the command goes on, and no second V8 context is made for it (one made every later request
 * dearer for the life of the process).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { getHeapSpaceStatistics, getHeapStatistics } from "node:v8"
import { settleMemory } from "../src/Memory.ts"

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
