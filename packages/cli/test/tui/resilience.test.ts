/**
 * The admin TUI when data is slow or gone (docs/admin.md "When the database goes away"): it
 * draws at once and takes keys while loading, keeps the last data with a one-line reason and a
 * retry when the database does not answer, recovers by itself, and never shows a stack trace.
 */
import { assert, describe, it } from "@effect/vitest"
import { render } from "ink-testing-library"
import { createElement as h } from "react"
import { Boundary } from "../../src/tui/Boundary.ts"
import { fake, RIVERSIDE } from "./fixture.ts"
import { KEY, mount } from "./screen.ts"

const STACK = /\bat .+:\d+:\d+|node:internal|Error:\s*$/m

describe("admin TUI: slow or missing data", () => {
  it("draws at once and takes keys while the data loads", async () => {
    const data = fake()
    data.hold = true
    const s = mount(data, { tenant: RIVERSIDE })
    await s.until("Loading…")
    await s.press("?")
    await s.until("All keys")
    await s.press(KEY.esc, "2")
    await s.until("[2 Subs]")
    assert.include(s.frame(), "Loading…")
    data.hold = false
    data.release()
    await s.until("crm.riverside")
    s.unmount()
  })

  it("keeps the last data and says the database does not answer, retries every 2 s and recovers by itself", async () => {
    const data = fake()
    const s = mount(data, { tenant: RIVERSIDE, refreshMs: 80 })
    await s.press("3")
    await s.until("invoice.paid")
    data.down = true
    const down = await s.until("The database does not answer: PgConnection: Failed to connect: connect\nECONNREFUSED 127.0.0.1:5432")
    assert.include(down, "Retrying every 0.08 s · r to retry now · the last data stays on screen")
    assert.include(down, "invoice.paid", "the last data stays")
    assert.notMatch(down, STACK)
    await s.press("2")
    await s.until("[2 Subs]")
    data.down = false
    await s.gone("does not answer")
    await s.until("crm.riverside")
    assert.isFalse(s.frames().some((f) => STACK.test(f)), "no frame shows a stack trace")
    s.unmount()
  })

  it("r retries at once; a database down from the start says so under Loading", async () => {
    const data = fake()
    data.down = true
    const s = mount(data, { tenant: RIVERSIDE })
    const f = await s.until("The database does not answer")
    assert.include(f, "Loading…")
    data.down = false
    await s.press("r")
    await s.until("Zapier")
    assert.notInclude(s.frame(), "does not answer")
    s.unmount()
  })

  it("an action the database cannot take says why, changes nothing, and can be tried again", async () => {
    const data = fake()
    const s = mount(data, { tenant: RIVERSIDE })
    await s.press("3")
    await s.until("invoice.paid")
    await s.press(KEY.down, KEY.down, "p")
    await s.until("Replay delivery 812")
    data.down = true
    await s.press("y")
    await s.until("Could not replay: the database does not answer (PgConnection: Failed to connect")
    assert.isFalse(data.calls.includes("replay 812") && data.state.deliveries.some((d) => d.id === 812 && d.status === "pending"))
    data.down = false
    await s.press("p", "y")
    await s.until("Replayed delivery 812")
    s.unmount()
  })

  it("a screen that cannot be drawn says so in one line, without a stack trace", async () => {
    const Broken = () => {
      throw new Error("boom\n    at Broken (screen.ts:1:1)")
    }
    const original = console.error
    console.error = () => undefined
    try {
      const app = render(h(Boundary, null, h(Broken)))
      const frame = app.lastFrame() ?? ""
      assert.include(frame, "The screen could not be drawn: boom (q quits)")
      assert.notMatch(frame, STACK)
      app.unmount()
    } finally {
      console.error = original
    }
  })
})
