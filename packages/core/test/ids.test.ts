/**
 * Random identifiers (API keys, tenant ids, event ids, cancel tokens): the length and alphabet
 * asked for, no repeats, and every base62 character about equally likely.
 */
import { assert, describe, it } from "@effect/vitest"
import { newEventId, randomBase62 } from "../src/index.ts"

const BASE62 = /^[0-9A-Za-z]*$/

describe("random identifiers", () => {
  it("randomBase62 gives the length asked for, in base62 only", () => {
    for (const length of [1, 16, 24, 32, 43, 5000]) {
      const id = randomBase62(length)
      assert.strictEqual(id.length, length)
      assert.match(id, BASE62)
    }
  })

  it("event ids are evt_ and 24 base62 characters, never repeated", () => {
    const ids = Array.from({ length: 20_000 }, newEventId)
    for (const id of ids.slice(0, 100)) assert.match(id, /^evt_[0-9A-Za-z]{24}$/)
    assert.strictEqual(new Set(ids).size, ids.length)
  })

  it("every character is about equally likely (chi-square over 620,000 draws)", () => {
    const counts = new Map<string, number>()
    for (let i = 0; i < 10_000; i++) {
      for (const c of randomBase62(62)) counts.set(c, (counts.get(c) ?? 0) + 1)
    }
    assert.strictEqual(counts.size, 62)
    const expected = 620_000 / 62
    let chi = 0
    for (const n of counts.values()) chi += (n - expected) ** 2 / expected
    // 61 degrees of freedom: the 99.999th percentile is about 125; a modulo bias toward the
    // first characters (bytes 248-255 kept) puts it in the thousands.
    assert.isBelow(chi, 125)
  })
})
