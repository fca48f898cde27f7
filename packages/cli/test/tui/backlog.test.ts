/**
 * The Backlog screen (docs/admin.md "The backlog"): each subscription of the chamber with its
 * deliveries due now, the oldest one's wait, those held behind an earlier one of their resource
 * and those waiting for a later retry, the longest-waiting first; the whole database's figures
 * beside the chamber's; refreshed by itself; enter opens a subscription's waiting deliveries.
 * In-memory data.
 */
import { assert, describe, it } from "@effect/vitest"
import { backedUp, fake, RIVERSIDE } from "./fixture.ts"
import { fits, KEY, mount } from "./screen.ts"

describe("admin TUI: Backlog", () => {
  it("lists each subscription's due, oldest due, held and later deliveries, the longest-waiting first, with every chamber's total", async () => {
    const data = fake()
    backedUp(data)
    const s = mount(data, { tenant: RIVERSIDE, width: 120 })
    await s.press("4")
    const f = await s.until("old-site.riverside.example/hook")
    assert.match(f, /id +url +state +fails +due +oldest due +held +later/)
    const rows = f.split("\n").filter((l) => /#\d /.test(l))
    assert.match(rows[0]!, /› #2 +crm\.riverside\.example\/webhooks\/chamber +failing +3 +5 +12m 0s +2 +1$/)
    assert.match(rows[1]!, /#1 +hooks\.zapier\.example\/catch\/8812\/ab3k +active +0 +0 +- +0 +0$/)
    assert.match(rows[2]!, /#3 +old-site\.riverside\.example\/hook +OFF +20 +0 +- +0 +0$/)
    assert.include(f, "Backlog · 5 due, 2 held · all chambers: 5 due, oldest 12m 0s, 2 held, 1 inactive")
    assert.include(f, "[4 Backlog]")
    assert.include(f, "enter deliveries")
    s.unmount()
  })

  it("follows the backlog as it drains, without a key", async () => {
    const data = fake()
    backedUp(data)
    const s = mount(data, { tenant: RIVERSIDE, width: 120, refreshMs: 50 })
    await s.press("4")
    await s.until(/#2 .* 5 +12m 0s +2 +1/)
    for (const id of [820, 821, 822]) data.settle(id, true)
    data.held.delete(823)
    await s.until(/#2 .* 2 +9m 0s +1 +1/)
    for (const id of [823, 824]) data.settle(id, true)
    data.held.clear()
    const drained = await s.until(/#2 .* 0 +- +0 +1/)
    assert.include(drained, "Backlog · 0 due, 0 held · all chambers: 0 due, 0 held, 1 inactive")
    s.unmount()
  })

  it("enter opens the subscription's waiting deliveries; a reactivation on Subscriptions shows here", async () => {
    const data = fake()
    backedUp(data)
    const s = mount(data, { tenant: RIVERSIDE, width: 120 })
    await s.press("4")
    await s.until("› #2")
    await s.press(KEY.enter)
    const waiting = await s.until("Deliveries · pending · #2 crm.riverside.example/webhooks/chamber")
    assert.match(waiting, /824 #2 +member\.updated +pending/)
    assert.notInclude(waiting, "invoice.paid", "only the pending ones")
    await s.press("2", "G", "a")
    await s.until("Reactivate #3 https://old-site.riverside.example/hook? Its failure count goes to 0 and its waiting deliveries go out.")
    await s.press("y")
    await s.until("Reactivated 1 subscription")
    await s.press("4")
    await s.until(/#3 +old-site\S+ +active +0 /)
    assert.include(data.calls, "reactivate 3")
    s.unmount()
  })

  it("fits a narrow terminal, says when there is nothing to show, and keeps the last figures while the database does not answer", async () => {
    const data = fake()
    backedUp(data)
    const s = mount(data, { tenant: RIVERSIDE, width: 60, height: 12, refreshMs: 50 })
    await s.press("4")
    const narrow = await s.until("crm.riverside")
    assert.isTrue(fits(narrow, 60, 12), narrow)
    data.down = true
    const down = await s.until("The database does not answer")
    assert.include(down, "crm.riverside", "the last figures stay")
    s.unmount()
    const empty = mount(fake({ hooks: [] }), { tenant: RIVERSIDE })
    await empty.press("4")
    await empty.until("No webhook subscriptions, so no backlog")
    empty.unmount()
  })
})
