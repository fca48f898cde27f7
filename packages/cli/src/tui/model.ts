/**
 * The admin TUI's model (docs/admin.md): what it holds (State), the actions it asks for (Task)
 * and their outcomes, what a key sees of the screen (Shown), and the small rules every part of
 * the state machine shares. state.ts, keyActions.ts and minting.ts change it.
 */
import * as Duration from "effect/Duration"
import { ALL_SCOPES } from "@chamber/core"
import { parseDuration } from "../Durations.ts"
import type { DeliveryView, HookRow, KeyRow, MintedKey, MintRequest, ReplayResult, RotatedSecret, SubscriptionBacklog, TenantRow } from "./AdminData.ts"
import type { Screen } from "./keymap.ts"

export type { Screen }
export const VIEWS = ["keys", "hooks", "deliveries", "backlog"] as const
export type View = (typeof VIEWS)[number]
export const STATUS_FILTERS = ["all", "failed", "pending", "succeeded"] as const
export type StatusFilter = (typeof STATUS_FILTERS)[number]
export const SCOPES: ReadonlyArray<string> = ALL_SCOPES
export const DEFAULT_DAILY_LIMIT = 25_000
export const MAX_DAILY_LIMIT = 2_147_483_647

/** Something that changes data, asked for by a key and run by App.ts. */
export type Task =
  | { readonly kind: "mint"; readonly request: MintRequest }
  | { readonly kind: "revoke"; readonly prefix: string; readonly name: string }
  | { readonly kind: "reactivate"; readonly ids: ReadonlyArray<number>; readonly label: string }
  | { readonly kind: "replay"; readonly ids: ReadonlyArray<number>; readonly label: string }
  | { readonly kind: "rotate"; readonly hookId: number }
  /** Counts the failed deliveries first, so the question can say how many. */
  | { readonly kind: "findFailed"; readonly hookId: number | undefined; readonly since: string | undefined; readonly label: string }

export type Outcome =
  | { readonly kind: "minted"; readonly key: MintedKey }
  | { readonly kind: "revoked" }
  | { readonly kind: "reactivated"; readonly count: number }
  | { readonly kind: "replayed"; readonly result: ReplayResult }
  | { readonly kind: "found"; readonly ids: ReadonlyArray<number> }
  | { readonly kind: "rotated"; readonly rotated: RotatedSecret }

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
  | { readonly kind: "rotated"; readonly rotated: RotatedSecret }

export interface Notice {
  readonly text: string
  readonly tone: "ok" | "error" | "info"
}

export interface State {
  /** The chosen chamber's public id. */
  readonly tenant: string | undefined
  /** The chamber came from `--tenant`: `esc` at the top stays in a chamber (`t` still chooses another). */
  readonly tenantGiven: boolean
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

export const perScreen = <A>(a: A): Record<Screen, A> => ({ tenants: a, keys: a, hooks: a, deliveries: a, backlog: a })

export const initialState = (tenant?: string): State => ({
  tenant,
  tenantGiven: tenant !== undefined,
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
  /** The chamber's subscriptions with their share of the backlog. */
  readonly backlog: ReadonlyArray<SubscriptionBacklog>
  /** The delivery whose attempts show, whether or not the list still holds it. */
  readonly inspected: DeliveryView | undefined
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

export type Named = "up" | "down" | "pgup" | "pgdn" | "home" | "end" | "enter" | "esc" | "tab" | "backtab" | "backspace" | "left" | "right"

export const named = (key: KeyPress): Named | undefined => {
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

export const info = (text: string): Notice => ({ text, tone: "info" })
export const error = (text: string): Notice => ({ text, tone: "error" })
export const ok = (text: string): Notice => ({ text, tone: "ok" })
export const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`

export const clamp = (n: number, length: number) => Math.max(0, Math.min(n, length - 1))

/** The selected row of a list, clamped to what is shown. */
export const selected = <A>(rows: ReadonlyArray<A>, cursor: number): A | undefined => rows[clamp(cursor, rows.length)]

export const withCursor = (s: State, cursor: number): State => ({ ...s, cursor: { ...s.cursor, [s.screen]: cursor } })

export const busy = (s: State): State | undefined =>
  s.task === undefined ? undefined : { ...s, notice: info("One thing at a time: wait for the current one to finish.") }

export const ask = (s: State, question: string, task: Task): State => busy(s) ?? { ...s, overlay: { kind: "confirm", question, task } }

export const run = (s: State, task: Task): State => busy(s) ?? { ...s, task, progress: undefined }

/** `text` edited by a key: typed characters appended, backspace drops the last. */
export const edit = (text: string, input: string, k: Named | undefined): string | undefined => {
  if (k === "backspace") return text.slice(0, -1)
  if (k !== undefined) return undefined
  const printable = input.replace(/[\x00-\x1f\x7f]/g, "")
  return printable === "" ? undefined : text + printable
}

/** `30m`, `2h`, `1d` (ago) or an ISO date or date-time, as an ISO time; undefined when neither. */
export const parseSince = (text: string, now: number): string | undefined => {
  const ago = parseDuration(text.replace(/\s*ago\s*$/i, "").replace(/min$/i, "m").toLowerCase())
  if (ago !== undefined) return new Date(now - Duration.toMillis(ago)).toISOString()
  if (!/^\d{4}-\d{2}-\d{2}/.test(text.trim())) return undefined
  const at = Date.parse(text.trim())
  return Number.isNaN(at) ? undefined : new Date(at).toISOString()
}

export const hookLabel = (h: HookRow | undefined, id: number) => h === undefined ? `subscription #${id}` : `#${id} ${h.url}`
