/**
 * docs/admin.md stays true: its screens are what the TUI draws for the same chamber (captures.ts
 * redraws them), and every key binding the TUI has is in its table of keys.
 */
import { assert, describe, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { EVERYWHERE, INSPECTING, MINTING, ON_SCREEN } from "../../src/tui/keymap.ts"
import { CAPTURES, DOC, documented, render } from "./captures.ts"

const doc = readFileSync(DOC, "utf8")

describe("docs/admin.md", () => {
  it("shows every screen exactly as the TUI draws it (node packages/cli/test/tui/captures.ts --write redraws them)", async () => {
    const shown = documented(doc)
    for (const capture of CAPTURES) {
      assert.isTrue(shown.has(capture.name), `docs/admin.md has no capture ${capture.name}`)
      assert.strictEqual(shown.get(capture.name), await render(capture), `the capture ${capture.name} in docs/admin.md no longer matches the TUI`)
    }
    assert.deepStrictEqual([...shown.keys()].filter((name) => !CAPTURES.some((c) => c.name === name)), [], "captures in the doc that nothing draws")
  })

  it("lists every key binding", () => {
    const table = doc.slice(doc.indexOf("## Keys"), doc.indexOf("## Minting a key"))
    for (const binding of [...EVERYWHERE, ...Object.values(ON_SCREEN).flat(), ...INSPECTING, ...MINTING]) {
      for (const key of binding.keys.replace("↑↓", "↑ ↓").split(" ")) assert.include(table, `\`${key}\``, `docs/admin.md "Keys" lacks ${key} (${binding.does})`)
    }
  })
})
