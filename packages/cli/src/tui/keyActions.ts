/**
 * What each key does (docs/admin.md "Keys"): on the lists, in a delivery's attempts, and in the
 * questions, the filter and the since prompt; the mint form's keys are in minting.ts.
 */
import type { DeliveryView, HookRow } from "./AdminData.ts"
import { minting } from "./minting.ts"
import {
  ask, busy, clamp, DEFAULT_DAILY_LIMIT, edit, error, hookLabel, info, type KeyPress, named, type Named, ok, type Overlay, parseSince,
  perScreen, plural, run, type Screen, selected, type Shown, type State, STATUS_FILTERS, type StatusFilter, VIEWS, withCursor
} from "./model.ts"

const rowsOf = (s: State, shown: Shown): ReadonlyArray<unknown> =>
  s.screen === "tenants" ? shown.tenants
    : s.screen === "keys" ? shown.keys
    : s.screen === "hooks" ? shown.hooks
    : s.screen === "backlog" ? shown.backlog
    : shown.deliveries

const move = (s: State, shown: Shown, k: Named | string): State | undefined => {
  const length = rowsOf(s, shown).length
  const at = clamp(s.cursor[s.screen], length)
  const to = k === "up" || k === "k" ? at - 1
    : k === "down" || k === "j" ? at + 1
    : k === "pgup" ? at - shown.page
    : k === "pgdn" ? at + shown.page
    : k === "home" || k === "g" ? 0
    : k === "end" || k === "G" ? length - 1
    : undefined
  return to === undefined ? undefined : withCursor(s, clamp(to, length))
}

const goTo = (s: State, screen: Screen): State =>
  s.tenant === undefined && screen !== "tenants"
    ? { ...s, notice: info("Choose a chamber first.") }
    : { ...s, screen, lastView: screen === "tenants" ? s.lastView : screen }

/** The keys a control character in typed text stands for. */
const CONTROL: Readonly<Record<string, KeyPress>> = { "\r": { return: true }, "\n": { return: true }, "\t": { tab: true }, "\x7f": { backspace: true }, "\b": { backspace: true } }

/** Where typed text goes into a field as it is, rather than key by key. */
const typing = (s: State) =>
  s.overlay?.kind === "filter" || s.overlay?.kind === "since" || (s.overlay?.kind === "mint" && (s.overlay.step === "name" || s.overlay.step === "limit"))

/** A terminal's answer to the device attributes question (terminal.ts) as ink hands it over, when it comes late. */
const DEVICE_ATTRIBUTES = /^\[\?[0-9;]*c$/

/** The state after one read of the keyboard: a key, or several keys typed or pasted at once. */
export const applyKey = (s0: State, input: string, key: KeyPress, shown: Shown): State => {
  if (DEVICE_ATTRIBUTES.test(input)) return s0
  const k = named(key)
  // Several keys in one read (fast typing, a paste): text runs and control characters, in order;
  // outside a text field, one key per character.
  if (k === undefined && [...input].length > 1) {
    const parts = input.match(/[\r\n\t\x7f\b]|[^\r\n\t\x7f\b]+/g) ?? []
    if (parts.length > 1) return parts.reduce((acc, part) => applyKey(acc, CONTROL[part] === undefined ? part : "", CONTROL[part] ?? {}, shown), s0)
    if (!typing(s0)) return [...input].reduce((acc, ch) => applyKey(acc, ch, {}, shown), s0)
  }
  if (key.ctrl) return s0
  const s: State = { ...s0, notice: undefined }
  const o = s.overlay
  if (o !== undefined) return inOverlay(s, o, input, k, shown)
  const c = k ?? input

  if (s.screen === "deliveries" && s.inspect !== undefined) {
    const inspected = inInspect(s, c, shown)
    if (inspected !== undefined) return inspected
  }
  switch (c) {
    case "q":
      return { ...s, quit: true }
    case "?":
      return { ...s, overlay: { kind: "help" } }
    case "/":
      return { ...s, overlay: { kind: "filter" }, inspect: undefined }
    case "r":
      return { ...s, refresh: s.refresh + 1 }
    case "t":
      return goTo(s, "tenants")
    case "1":
    case "2":
    case "3":
    case "4":
      return goTo(s, VIEWS[Number(c) - 1]!)
    case "tab":
    case "backtab": {
      const at = s.screen === "tenants" ? VIEWS.indexOf(s.lastView) : VIEWS.indexOf(s.screen)
      return goTo(s, VIEWS[(at + (c === "tab" ? 1 : VIEWS.length - 1)) % VIEWS.length]!)
    }
    case "esc":
      if (s.filter[s.screen] !== "") return { ...s, filter: { ...s.filter, [s.screen]: "" } }
      if (s.screen === "deliveries" && s.hookId !== undefined) return { ...s, hookId: undefined, cursor: { ...s.cursor, deliveries: 0 } }
      if (s.screen === "tenants") return s.tenant === undefined ? s : { ...s, screen: s.lastView }
      if (s.tenantGiven) return { ...s, notice: info("This is the top: t chooses another chamber, q quits.") }
      return { ...s, screen: "tenants" }
  }
  const moved = move(s, shown, c)
  if (moved !== undefined) return moved
  switch (s.screen) {
    case "tenants":
      return onTenants(s, c, shown)
    case "keys":
      return onKeys(s, c, shown)
    case "hooks":
      return onHooks(s, c, shown)
    case "deliveries":
      return onDeliveries(s, c, shown)
    case "backlog":
      return onBacklog(s, c, shown)
  }
}

const onTenants = (s: State, c: string, shown: Shown): State => {
  const tenant = selected(shown.tenants, s.cursor.tenants)
  if (c !== "enter" || tenant === undefined) return s
  const changed = tenant.id !== s.tenant
  return {
    ...s,
    tenant: tenant.id,
    screen: s.lastView,
    ...(changed ? { hookId: undefined, inspect: undefined, tracking: undefined, cursor: { ...perScreen(0), tenants: s.cursor.tenants } } : {})
  }
}

const onKeys = (s: State, c: string, shown: Shown): State => {
  if (c === "n") {
    if (shown.admins !== undefined && shown.admins.length === 0) {
      return { ...s, notice: error(`Only a chamber_admin may mint, and this chamber has none: chamber user add --tenant ${s.tenant} --email … --role chamber_admin`) }
    }
    return busy(s) ?? { ...s, overlay: { kind: "mint", step: "name", name: "", as: 0, cursor: 0, scopes: [], limit: String(DEFAULT_DAILY_LIMIT) } }
  }
  if (c === "d") {
    const k = selected(shown.keys, s.cursor.keys)
    if (k === undefined) return s
    if (k.revoked_at !== null) return { ...s, notice: info(`${k.name} (${k.prefix}) is already revoked.`) }
    return ask(s, `Revoke ${k.name} (${k.prefix})? It answers 401 from then on; this cannot be undone.`, { kind: "revoke", prefix: k.prefix, name: k.name })
  }
  return s
}

const failedOf = (s: State, hookId: number, hook: HookRow | undefined): State =>
  run(s, { kind: "findFailed", hookId, since: undefined, label: `of ${hookLabel(hook, hookId)}` })

/** The Deliveries screen narrowed to one subscription and a status. */
const deliveriesOf = (s: State, hookId: number, status: StatusFilter): State => ({
  ...s,
  screen: "deliveries",
  lastView: "deliveries",
  hookId,
  status,
  inspect: undefined,
  cursor: { ...s.cursor, deliveries: 0 }
})

const onBacklog = (s: State, c: string, shown: Shown): State => {
  const b = selected(shown.backlog, s.cursor.backlog)
  return c === "enter" && b !== undefined ? deliveriesOf(s, b.id, "pending") : s
}

const onHooks = (s: State, c: string, shown: Shown): State => {
  const h = selected(shown.hooks, s.cursor.hooks)
  switch (c) {
    case "enter":
      return h === undefined ? s : deliveriesOf(s, h.id, "all")
    case "a":
      if (h === undefined) return s
      if (h.active && h.failure_count === 0) return { ...s, notice: info(`#${h.id} is active, with no failures to reset.`) }
      return ask(s, `Reactivate #${h.id} ${h.url}? Its failure count goes to 0 and its waiting deliveries go out.`, {
        kind: "reactivate",
        ids: [h.id],
        label: `#${h.id}`
      })
    case "A": {
      const inactive = shown.allHooks.filter((x) => !x.active)
      if (inactive.length === 0) return { ...s, notice: info("Every subscription is active.") }
      return ask(s, `Reactivate ${plural(inactive.length, "inactive subscription")} (${inactive.map((x) => `#${x.id}`).join(", ")})?`, {
        kind: "reactivate",
        ids: inactive.map((x) => x.id),
        label: plural(inactive.length, "subscription")
      })
    }
    case "P":
      return h === undefined ? s : failedOf(s, h.id, h)
    case "s":
      return h === undefined ? s : ask(s, `Rotate the signing secret of #${h.id} ${h.url}? The old one keeps signing beside the new one for a day.`, {
        kind: "rotate",
        hookId: h.id
      })
  }
  return s
}

const replayOne = (s: State, d: DeliveryView | undefined): State => {
  if (d === undefined) return s
  if (d.status === "pending") return { ...s, notice: info(`Delivery ${d.id} is already waiting to be sent.`) }
  return ask(s, `Replay delivery ${d.id} (${d.type}, ${d.status}) to ${d.url}, with the same event id?`, {
    kind: "replay",
    ids: [d.id],
    label: `delivery ${d.id}`
  })
}

const onDeliveries = (s: State, c: string, shown: Shown): State => {
  const d = selected(shown.deliveries, s.cursor.deliveries)
  switch (c) {
    case "enter":
      return d === undefined ? s : { ...s, inspect: d.id }
    case "f":
      return { ...s, status: STATUS_FILTERS[(STATUS_FILTERS.indexOf(s.status) + 1) % STATUS_FILTERS.length]!, cursor: { ...s.cursor, deliveries: 0 } }
    case "h": {
      const ids = shown.allHooks.map((x) => x.id)
      const at = s.hookId === undefined ? -1 : ids.indexOf(s.hookId)
      return { ...s, hookId: at + 1 < ids.length ? ids[at + 1] : undefined, cursor: { ...s.cursor, deliveries: 0 } }
    }
    case "p":
      return replayOne(s, d)
    case "P": {
      const hookId = s.hookId ?? d?.hook_id
      if (hookId === undefined) return { ...s, notice: info("Choose a subscription (h) or a delivery first.") }
      return failedOf(s, hookId, shown.allHooks.find((x) => x.id === hookId))
    }
    case "S":
      return busy(s) ?? { ...s, overlay: { kind: "since", text: "", hookId: s.hookId } }
  }
  return s
}

const inInspect = (s: State, c: string, shown: Shown): State | undefined => {
  const at = shown.deliveries.findIndex((d) => d.id === s.inspect)
  switch (c) {
    case "esc":
    case "enter":
    case "left":
    case "backspace":
      return { ...s, inspect: undefined }
    case "up":
    case "k":
    case "down":
    case "j": {
      const up = c === "up" || c === "k"
      // A delivery the list no longer holds (replayed out of a status filter) stood at the cursor: the rows after it moved up.
      const to = at >= 0 ? clamp(at + (up ? -1 : 1), shown.deliveries.length) : s.cursor.deliveries - (up ? 1 : 0)
      const d = shown.deliveries[to]
      return d === undefined ? s : { ...withCursor(s, to), inspect: d.id }
    }
    case "p":
      return replayOne(s, shown.inspected)
  }
  return undefined
}

const inOverlay = (s: State, o: Overlay, input: string, k: Named | undefined, shown: Shown): State => {
  switch (o.kind) {
    case "help":
      return k === "esc" || k === "enter" || input === "?" || input === "q" ? { ...s, overlay: undefined } : s
    case "minted":
      return k === "esc" || k === "enter" ? { ...s, overlay: undefined, notice: ok(`${o.key.name} (${o.key.prefix}) is ready; its key is not kept anywhere.`) } : s
    case "rotated":
      return k === "esc" || k === "enter"
        ? { ...s, overlay: undefined, notice: ok(`#${o.rotated.id} signs with its new secret; the old one also signs until ${o.rotated.previous_expires_at}.`) }
        : s
    case "filter": {
      if (k === "enter") return { ...s, overlay: undefined }
      if (k === "esc") return { ...s, overlay: undefined, filter: { ...s.filter, [s.screen]: "" } }
      const text = edit(s.filter[s.screen], input, k)
      return text === undefined ? s : { ...s, filter: { ...s.filter, [s.screen]: text }, cursor: { ...s.cursor, [s.screen]: 0 } }
    }
    case "confirm":
      if (input === "y" || input === "Y") return { ...s, overlay: undefined, task: o.task, progress: undefined }
      if (input === "n" || input === "N" || k === "esc") return { ...s, overlay: undefined, notice: info("Nothing changed.") }
      return s
    case "since": {
      if (k === "esc") return { ...s, overlay: undefined, notice: info("Nothing changed.") }
      if (k === "enter") {
        const since = parseSince(o.text, shown.now)
        if (since === undefined) return { ...s, notice: error(`"${o.text}" is no time: write 30m, 2h or 1d (ago), or an ISO date such as 2026-11-22T08:00Z.`) }
        const scope = o.hookId === undefined ? "of every subscription" : `of ${hookLabel(shown.allHooks.find((x) => x.id === o.hookId), o.hookId)}`
        return run({ ...s, overlay: undefined }, { kind: "findFailed", hookId: o.hookId, since, label: `${scope} since ${since}` })
      }
      const text = edit(o.text, input, k)
      return text === undefined ? s : { ...s, overlay: { ...o, text } }
    }
    case "mint":
      return minting(s, o, input, k, shown)
  }
}
