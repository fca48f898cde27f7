/**
 * The one rule that makes text from outside inert in a terminal (src/Inert.ts, docs/cli.md "Text
 * from outside"): every control character a visible stand-in of the same width, JSON that stays
 * the same value with none left raw, and the TUI's Text, the only one its screens use, applying it.
 */
import { assert, describe, it } from "@effect/vitest"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { render } from "ink-testing-library"
import { createElement as h } from "react"
import { Tenant } from "@chamber/core"
import { inert, inertValue, jsonText } from "../src/Inert.ts"
import { Text } from "../src/tui/Text.ts"

/** Every C0 control, DEL and every C1 control. */
const CONTROLS = [...Array.from({ length: 0x20 }, (_, i) => i), ...Array.from({ length: 0x21 }, (_, i) => 0x7f + i)].map((c) => String.fromCharCode(c))
const RAW_CONTROL = /[\u0000-\u001f\u007f-\u009f]/

describe("inert", () => {
  it("replaces each control character by one visible character: C0 by its picture, DEL by ␡, C1 by U+FFFD", () => {
    const all = CONTROLS.join("")
    const shown = inert(all)
    assert.notMatch(shown, RAW_CONTROL)
    assert.strictEqual([...shown].length, CONTROLS.length, "one character for one, so widths fitted before stay right")
    assert.strictEqual(inert("\x1b]52;c;aGk=\x07"), "␛]52;c;aGk=␇")
    assert.strictEqual(inert("a\tb\nc\rd"), "a␉b␊c␍d")
    assert.strictEqual(inert("\x7f\u009b2J\u0080\u009f"), "␡\ufffd2J\ufffd\ufffd")
  })

  it("keeps tab and newline where a layout takes several lines, and every other character as it is", () => {
    assert.strictEqual(inert("one\ttwo\nthree\r\x1b[2J", "lines"), "one\ttwo\nthree␍␛[2J")
    const printable = "Café Ünïcode ✓ 𝄞 👩‍👩‍👧 \u00a0\u00ff\u2028 العربية"
    assert.strictEqual(inert(printable), printable)
    assert.strictEqual(inert(printable, "lines"), printable)
  })
})

describe("jsonText", () => {
  it("is the same JSON value with no control character left raw, C1 and DEL written as \\u escapes", () => {
    const value = { every: CONTROLS.join(""), list: ["\x1b]0;t\x07", "\u009b31m"], n: 1, nothing: null }
    for (const space of [undefined, 2]) {
      const text = jsonText(value, space)
      assert.notMatch(text.replace(/\n/g, ""), RAW_CONTROL)
      assert.deepStrictEqual(JSON.parse(text), value)
    }
    assert.strictEqual(jsonText("\x7f\u0085"), '"\\u007f\\u0085"')
    assert.strictEqual(jsonText({ a: "plain" }, 2), JSON.stringify({ a: "plain" }, null, 2))
  })
})

describe("inertValue", () => {
  it("makes every string of a result inert, through arrays, records and record classes, leaving the rest", () => {
    const at = new Date("2026-11-22T10:00:00.000Z")
    const tenant = new Tenant({
      id: 1,
      public_id: "chm_x",
      name: "Evil \x1b]0;t\x07",
      website: null,
      currency: "USD",
      invoice_prefix: "INV-",
      net_terms: 30,
      created_at: "2026-11-22T10:00:00.000Z",
      deleting_at: null
    })
    const value = { rows: [{ name: "a\u009b2J", n: 3, at, ok: true, none: null }], tenant }
    const shown = inertValue(value)
    assert.deepStrictEqual(shown.rows[0], { name: "a\ufffd2J", n: 3, at, ok: true, none: null })
    assert.strictEqual(shown.rows[0]!.at, at)
    assert.instanceOf(shown.tenant, Tenant)
    assert.strictEqual(shown.tenant.name, "Evil ␛]0;t␇")
    assert.strictEqual(value.rows[0]!.name, "a\u009b2J", "the result itself is left as it was")
  })
})

describe("the admin TUI's Text", () => {
  it("draws strings, nested ones too, with their control characters visible and inert", () => {
    const app = render(h(Text, { color: "red" }, "before \x1b]8;;https://evil.example/\x1b\\link", h(Text, { bold: true }, " \u009d0;title\x07"), " after"))
    const frame = app.lastFrame() ?? ""
    assert.notMatch(frame.replace(/\x1b\[[0-9;]*m/g, ""), /\x1b|[\u0080-\u009f\x07]/)
    assert.include(frame.replace(/\x1b\[[0-9;]*m/g, ""), "before ␛]8;;https://evil.example/␛\\link \ufffd0;title␇ after")
    app.unmount()
  })

  it("is the only Text the TUI's screens draw with: none imports ink's own", () => {
    const root = fileURLToPath(new URL("../src/tui", import.meta.url))
    const files = readdirSync(root, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts"))
    assert.isAbove(files.length, 10)
    for (const file of files) {
      const source = readFileSync(join(root, file), "utf8")
      const fromInk = /import\s*\{([^}]*)\}\s*from\s*"ink"/g
      for (const [, names] of source.matchAll(fromInk)) {
        const imported = names!.split(",").map((n) => n.trim().split(/\s+as\s+/)[0])
        if (file !== "Text.ts") assert.notInclude(imported, "Text", `${file} draws with ink's Text: import Text from tui/Text.ts`)
        if (file !== "Text.ts") assert.notInclude(imported, "Transform", `${file} draws with ink's Transform`)
      }
    }
  })
})
