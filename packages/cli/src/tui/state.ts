/**
 * The admin TUI's state and what each key and each finished action does to it (docs/admin.md):
 * one pure function, so keys typed faster than the screen redraws still apply in order, and the
 * whole behaviour is testable without a terminal. App.ts runs the actions it asks for (`task`).
 */
import { ALL_SCOPES, READ_SCOPES } from "@chamber/core"
import type { DeliveryView, HookRow, KeyRow, MintedKey, MintRequest, ReplayResult, TenantRow } from "./AdminData.ts"
import type { Screen } from "./keymap.ts"

export type { Screen }
export const VIEWS = ["keys", "hooks", "deliveries"] as const
export type View = (typeof VIEWS)[number]
export const STATUS_FILTERS = ["all", "failed", "pending", "succeeded"] as const
export type StatusFilter = (typeof STATUS_FILTERS)[number]
export const SCOPES: ReadonlyArray<string> = ALL_SCOPES
export const DEFAULT_DAILY_LIMIT = 25_000
const MAX_DAILY_LIMIT = 2_147_483_647

/** Something that changes data, asked for by a key and run by App.ts. */
export type Task =
  | { readonly kind: "mint"; readonly request: MintRequest }
  | { readonly kind: "revoke"; readonly prefix: string; readonly name: string }
  | { readonly kind: "reactivate"; readonly ids: ReadonlyArray<number>; readonly label: string }
  | { readonly kind: "replay"; readonly ids: ReadonlyArray<number>; readonly label: string }
  /** Counts the failed deliveries first, so the question can say how many. */
  | { readonly kind: "findFailed"; readonly hookId: number | undefined; readonly since: string | undefined; readonly label: string }

export type Outcome =
  | { readonly kind: "minted"; readonly key: MintedKey }
  | { readonly kind: "revoked" }
  | { readonly kind: "reactivated"; readonly count: number }
  | { readonly kind: "replayed"; readonly result: ReplayResult }
  | { readonly kind: "found"; readonly ids: ReadonlyArray<number> }

export type MintStep = "name" | "as" | "scopes" | "limit" | "review"

export type Overlay =
  | { readonly kind: "help" }
  /** Typing the list's filter (state.filter). */
  | { readonly kind: "filter" }
  | { readonly kind: "confirm"; readonly question: string; readonly task: Task }
  | { readonly kind: "since"; readonly text: string; readonly hookId: number | undefined }
  | {
    readonly kind: "mint"
    readonly step: MintStep
    readonly name: string
    readonly as: number
    readonly cursor: number
    readonly scopes: ReadonlyArray<string>
    readonly limit: string
  }
  | { readonly kind: "minted"; readonly key: MintedKey }

export interface Notice {
  readonly text: string
  readonly tone: "ok" | "error" | "info"
}

export interface State {
  /** The chosen chamber's public id. */
  readonly tenant: string | undefined
  readonly screen: Screen
  readonly lastView: View
  readonly cursor: Readonly<Record<Screen, number>>
  readonly filter: Readonly<Record<Screen, string>>
  readonly status: StatusFilter
  readonly hookId: number | undefined
  /** The delivery whose attempts show. */
  readonly inspect: number | undefined
  readonly overlay: Overlay | undefined
  /** The action asked for or running. */
  readonly task: Task | undefined
  readonly progress: { readonly done: number; readonly total: number } | undefined
  readonly notice: Notice | undefined
  /** Replayed deliveries, followed until they settle. */
  readonly tracking: { readonly ids: ReadonlyArray<number>; readonly label: string } | undefined
  /** Bumped to reload now. */
  readonly refresh: number
  readonly quit: boolean
}

const perScreen = <A>(a: A): Record<Screen, A> => ({ tenants: a, keys: a, hooks: a, deliveries: a })

export const initialState = (tenant?: string): State => ({
  tenant,
  screen: tenant === undefined ? "tenants" : "keys",
  lastView: "keys",
  cursor: perScreen(0),
  filter: perScreen(""),
  status: "all",
  hookId: undefined,
  inspect: undefined,
  overlay: undefined,
  task: undefined,
  progress: undefined,
  notice: undefined,
  tracking: undefined,
  refresh: 0,
  quit: false
})

/** What the screen shows now (after the filter): what keys act on. */
export interface Shown {
  readonly tenants: ReadonlyArray<TenantRow>
  readonly keys: ReadonlyArray<KeyRow>
  readonly hooks: ReadonlyArray<HookRow>
  readonly deliveries: ReadonlyArray<DeliveryView>
  /** Every subscription of the chamber, unfiltered: what `h` cycles through. */
  readonly allHooks: ReadonlyArray<HookRow>
  /** The chamber's chamber_admin emails; undefined while loading. */
  readonly admins: ReadonlyArray<string> | undefined
  /** Rows on one page of the list. */
  readonly page: number
  readonly now: number
}

/** A key as ink reports it, the parts we read. */
export interface KeyPress {
  readonly upArrow?: boolean
  readonly downArrow?: boolean
  readonly leftArrow?: boolean
  readonly rightArrow?: boolean
  readonly pageUp?: boolean
  readonly pageDown?: boolean
  readonly home?: boolean
  readonly end?: boolean
  readonly return?: boolean
  readonly escape?: boolean
  readonly tab?: boolean
  readonly shift?: boolean
  readonly backspace?: boolean
  readonly delete?: boolean
  readonly ctrl?: boolean
}

export type Event =
  | { readonly type: "key"; readonly input: string; readonly key: KeyPress; readonly shown: Shown }
  | { readonly type: "tenants"; readonly tenants: ReadonlyArray<TenantRow> }
  | { readonly type: "progress"; readonly done: number; readonly total: number }
  | { readonly type: "done"; readonly task: Task; readonly outcome: Outcome }
  | { readonly type: "failed"; readonly task: Task; readonly message: string }

type Named = "up" | "down" | "pgup" | "pgdn" | "home" | "end" | "enter" | "esc" | "tab" | "backtab" | "backspace" | "left" | "right"

const named = (key: KeyPress): Named | undefined => {
  if (key.upArrow) return "up"
  if (key.downArrow) return "down"
  if (key.leftArrow) return "left"
  if (key.rightArrow) return "right"
  if (key.pageUp) return "pgup"
  if (key.pageDown) return "pgdn"
  if (key.home) return "home"
  if (key.end) return "end"
  if (key.return) return "enter"
  if (key.escape) return "esc"
  if (key.tab) return key.shift ? "backtab" : "tab"
  if (key.backspace || key.delete) return "backspace"
  return undefined
}

const DOING: Readonly<Record<Task["kind"], string>> = {
  mint: "mint the key",
  revoke: "revoke the key",
  reactivate: "reactivate",
  replay: "replay",
  findFailed: "find the failed deliveries"
}

const info = (text: string): Notice => ({ text, tone: "info" })
const error = (text: string): Notice => ({ text, tone: "error" })
const ok = (text: string): Notice => ({ text, tone: "ok" })
const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`

const rowsOf = (s: State, shown: Shown): ReadonlyArray<unknown> =>
  s.screen === "tenants" ? shown.tenants : s.screen === "keys" ? shown.keys : s.screen === "hooks" ? shown.hooks : shown.deliveries

const clamp = (n: number, length: number) => Math.max(0, Math.min(n, length - 1))

/** The selected row of a list, clamped to what is shown. */
export const selected = <A>(rows: ReadonlyArray<A>, cursor: number): A | undefined => rows[clamp(cursor, rows.length)]

const withCursor = (s: State, cursor: number): State => ({ ...s, cursor: { ...s.cursor, [s.screen]: cursor } })

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

const busy = (s: State): State | undefined =>
  s.task === undefined ? undefined : { ...s, notice: info("One thing at a time: wait for the current one to finish.") }

const ask = (s: State, question: string, task: Task): State => busy(s) ?? { ...s, overlay: { kind: "confirm", question, task } }

const run = (s: State, task: Task): State => busy(s) ?? { ...s, task, progress: undefined }

/** `text` edited by a key: typed characters appended, backspace drops the last. */
const edit = (text: string, input: string, k: Named | undefined): string | undefined => {
  if (k === "backspace") return text.slice(0, -1)
  if (k !== undefined) return undefined
  const printable = input.replace(/[\x00-\x1f\x7f]/g, "")
  return printable === "" ? undefined : text + printable
}

const RELATIVE = /^\s*(\d+)\s*(m|min|h|d)\s*(ago)?\s*$/i
const UNIT_MS: Readonly<Record<string, number>> = { m: 60_000, min: 60_000, h: 3_600_000, d: 86_400_000 }

/** `30m`, `2h`, `1d` (ago) or an ISO date or date-time, as an ISO time; undefined when neither. */
export const parseSince = (text: string, now: number): string | undefined => {
  const relative = RELATIVE.exec(text)
  if (relative !== null) return new Date(now - Number(relative[1]) * UNIT_MS[relative[2]!.toLowerCase()]!).toISOString()
  if (!/^\d{4}-\d{2}-\d{2}/.test(text.trim())) return undefined
  const at = Date.parse(text.trim())
  return Number.isNaN(at) ? undefined : new Date(at).toISOString()
}

export const describeScopes = (scopes: ReadonlyArray<string>): string =>
  scopes.length === SCOPES.length ? `all (${SCOPES.length})`
    : scopes.length === READ_SCOPES.length && READ_SCOPES.every((r) => scopes.includes(r)) ? `read (${READ_SCOPES.length})`
    : scopes.join(",")

const hookLabel = (h: HookRow | undefined, id: number) => h === undefined ? `subscription #${id}` : `#${id} ${h.url}`

export const reduce = (s: State, e: Event): State => {
  switch (e.type) {
    case "tenants": {
      if (s.tenant !== undefined && !e.tenants.some((t) => t.id === s.tenant)) {
        return { ...s, tenant: undefined, screen: "tenants", notice: error(`No chamber ${s.tenant}: choose one.`) }
      }
      if (s.tenant === undefined && s.screen === "tenants" && e.tenants.length === 1 && s.notice === undefined) {
        return { ...s, tenant: e.tenants[0]!.id, screen: s.lastView }
      }
      return s
    }
    case "progress":
      return { ...s, progress: { done: e.done, total: e.total } }
    case "failed":
      return { ...s, task: undefined, progress: undefined, notice: error(`Could not ${DOING[e.task.kind]}: ${e.message}`), refresh: s.refresh + 1 }
    case "done":
      return { ...finished(s, e.task, e.outcome), task: undefined, progress: undefined, refresh: s.refresh + 1 }
    case "key":
      return pressed(s, e.input, e.key, e.shown)
  }
}

const finished = (s: State, task: Task, outcome: Outcome): State => {
  switch (outcome.kind) {
    case "minted":
      return { ...s, overlay: { kind: "minted", key: outcome.key }, notice: undefined }
    case "revoked":
      return { ...s, notice: ok(task.kind === "revoke" ? `Revoked ${task.name} (${task.prefix}): it answers 401 from now on.` : "Revoked.") }
    case "reactivated":
      return { ...s, notice: ok(`Reactivated ${plural(outcome.count, "subscription")}: failure counts at 0, waiting deliveries go out.`) }
    case "replayed": {
      const { replayed, skipped } = outcome.result
      const label = task.kind === "replay" ? task.label : ""
      return {
        ...s,
        tracking: replayed.length === 0 ? s.tracking : { ids: replayed, label },
        notice: replayed.length === 0
          ? info(`Nothing to replay: ${plural(skipped.length, "delivery", "deliveries")} already waiting to be sent.`)
          : undefined
      }
    }
    case "found": {
      if (task.kind !== "findFailed") return s
      if (outcome.ids.length === 0) return { ...s, notice: info(`No failed deliveries ${task.label}.`) }
      return {
        ...s,
        overlay: {
          kind: "confirm",
          question: `Replay ${plural(outcome.ids.length, "failed delivery", "failed deliveries")} ${task.label}?`,
          task: { kind: "replay", ids: outcome.ids, label: `${plural(outcome.ids.length, "delivery", "deliveries")} ${task.label}` }
        }
      }
    }
  }
}

const pressed = (s0: State, input: string, key: KeyPress, shown: Shown): State => {
  const k = named(key)
  const s: State = { ...s0, notice: undefined }
  const o = s.overlay
  if (o !== undefined) return inOverlay(s, o, input, k, shown)
  // Pasted text outside a text field: one key per character.
  if (k === undefined && [...input].length > 1) return [...input].reduce((acc, ch) => pressed(acc, ch, {}, shown), s0)
  if (key.ctrl) return s0
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

const onHooks = (s: State, c: string, shown: Shown): State => {
  const h = selected(shown.hooks, s.cursor.hooks)
  switch (c) {
    case "enter":
      return h === undefined ? s : { ...s, screen: "deliveries", lastView: "deliveries", hookId: h.id, status: "all", inspect: undefined, cursor: { ...s.cursor, deliveries: 0 } }
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
      const to = clamp(at + (c === "up" || c === "k" ? -1 : 1), shown.deliveries.length)
      const d = shown.deliveries[to]
      return d === undefined ? s : { ...withCursor(s, to), inspect: d.id }
    }
    case "p":
      return replayOne(s, shown.deliveries[at])
  }
  return undefined
}

const inOverlay = (s: State, o: Overlay, input: string, k: Named | undefined, shown: Shown): State => {
  switch (o.kind) {
    case "help":
      return k === "esc" || k === "enter" || input === "?" || input === "q" ? { ...s, overlay: undefined } : s
    case "minted":
      return k === "esc" || k === "enter" ? { ...s, overlay: undefined, notice: ok(`${o.key.name} (${o.key.prefix}) is ready; its key is not kept anywhere.`) } : s
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

type Minting = Extract<Overlay, { kind: "mint" }>

const minting = (s: State, o: Minting, input: string, k: Named | undefined, shown: Shown): State => {
  const at = (step: MintStep, more: Partial<Minting> = {}): State => ({ ...s, overlay: { ...o, ...more, step } })
  const back: Readonly<Record<MintStep, MintStep | undefined>> = { name: undefined, as: "name", scopes: "as", limit: "scopes", review: "limit" }
  if (k === "esc") {
    const previous = back[o.step]
    return previous === undefined ? { ...s, overlay: undefined, notice: info("Nothing minted.") } : at(previous)
  }
  const admins = shown.admins ?? []
  switch (o.step) {
    case "name": {
      if (k === "enter") {
        if (o.name.trim() === "") return { ...s, notice: error("Give the key a name, e.g. the integration that will use it.") }
        if (shown.admins === undefined) return { ...s, notice: info("Still loading the chamber's admins: press enter again in a moment.") }
        if (admins.length === 0) return { ...s, overlay: undefined, notice: error("Only a chamber_admin may mint, and this chamber has none.") }
        return at("as", { as: Math.min(o.as, admins.length - 1) })
      }
      const name = edit(o.name, input, k)
      return name === undefined ? s : at("name", { name: name.slice(0, 255) })
    }
    case "as":
      if (k === "up" || input === "k") return at("as", { as: clamp(o.as - 1, admins.length) })
      if (k === "down" || input === "j") return at("as", { as: clamp(o.as + 1, admins.length) })
      return k === "enter" ? at("scopes") : s
    case "scopes": {
      if (k === "up" || input === "k") return at("scopes", { cursor: clamp(o.cursor - 1, SCOPES.length) })
      if (k === "down" || input === "j") return at("scopes", { cursor: clamp(o.cursor + 1, SCOPES.length) })
      if (k === "pgup" || k === "home") return at("scopes", { cursor: 0 })
      if (k === "pgdn" || k === "end") return at("scopes", { cursor: SCOPES.length - 1 })
      if (input === " ") {
        const scope = SCOPES[o.cursor]!
        const scopes = o.scopes.includes(scope) ? o.scopes.filter((x) => x !== scope) : [...o.scopes, scope]
        return at("scopes", { scopes: SCOPES.filter((x) => scopes.includes(x)) })
      }
      if (input === "r") return at("scopes", { scopes: READ_SCOPES })
      if (input === "a") return at("scopes", { scopes: SCOPES })
      if (input === "n") return at("scopes", { scopes: [] })
      if (k === "enter") return o.scopes.length === 0 ? { ...s, notice: error("Choose at least one scope: a key without scopes can do nothing.") } : at("limit")
      return s
    }
    case "limit": {
      if (k === "enter") {
        const limit = Number(o.limit)
        if (!/^\d+$/.test(o.limit) || limit < 1 || limit > MAX_DAILY_LIMIT) {
          return { ...s, notice: error(`The daily limit is a whole number from 1 to ${MAX_DAILY_LIMIT}.`) }
        }
        return at("review")
      }
      const limit = edit(o.limit, input.replace(/\D/g, ""), k)
      return limit === undefined ? s : at("limit", { limit: limit.slice(0, 10) })
    }
    case "review":
      if (input === "y" || input === "Y" || k === "enter") {
        return run({ ...s, overlay: o }, {
          kind: "mint",
          request: { tenant: s.tenant ?? "", asEmail: admins[o.as] ?? "", name: o.name.trim(), scopes: o.scopes, dailyLimit: Number(o.limit) }
        })
      }
      if (input === "n" || input === "N") return { ...s, overlay: undefined, notice: info("Nothing minted.") }
      return s
  }
}
