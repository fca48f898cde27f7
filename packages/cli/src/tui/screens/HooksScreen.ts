/**
 * A chamber's webhook subscriptions and their health (docs/admin.md "Inspecting
 * subscriptions"): url, events, active (or about to be deactivated: 15 or more failures in a
 * row), consecutive failures, how many more deactivate it (as GET /api/v1/hooks/{hook} says),
 * last success and failure, and a sparkline of the latest attempts.
 */
import { createElement as h } from "react"
import { DEACTIVATION_WARNING_AT } from "@chamber/core"
import type { HookRow } from "../AdminData.ts"
import { ago, type Column, sparkline } from "../format.ts"
import { emptyText, Table } from "../Table.ts"

/** Active, but 15 or more failed deliveries in a row: a few more deactivate it (the Hooks and Backlog screens). */
export const aboutToDeactivate = (x: { readonly active: boolean; readonly failure_count: number }) =>
  x.active && x.failure_count >= DEACTIVATION_WARNING_AT

export const hookText = (x: HookRow) => `#${x.id} ${x.url} ${x.events.join(" ")} ${x.active ? "active" : "inactive"}`

const columns = (now: number): ReadonlyArray<Column<HookRow>> => [
  { header: "id", min: 3, keep: 10, cell: (x) => `#${x.id}` },
  { header: "url", min: 14, max: 48, grow: 4, keep: 10, cell: (x) => x.url.replace(/^https:\/\//, "") },
  { header: "events", min: 8, max: 48, grow: 1, keep: 5, cell: (x) => x.events.join(",") },
  {
    header: "state",
    min: 6,
    keep: 9,
    cell: (x) => (!x.active ? "OFF" : aboutToDeactivate(x) ? "ENDING" : "active"),
    color: (x) => (!x.active ? "red" : aboutToDeactivate(x) ? "yellow" : "green")
  },
  {
    header: "fails",
    min: 5,
    keep: 8,
    align: "right",
    cell: (x) => String(x.failure_count),
    color: (x) => (x.failure_count === 0 ? undefined : x.failure_count >= 10 ? "red" : "yellow")
  },
  {
    header: "left",
    min: 4,
    keep: 8,
    align: "right",
    cell: (x) => String(x.failures_before_deactivation),
    color: (x) => (x.failures_before_deactivation === 0 ? "red" : aboutToDeactivate(x) ? "yellow" : undefined)
  },
  { header: "last ok", min: 8, keep: 6, cell: (x) => ago(x.last_success_at, now) },
  { header: "failed", min: 8, keep: 6, cell: (x) => ago(x.last_failure_at, now) },
  {
    header: "recent",
    min: 10,
    max: 20,
    grow: 1,
    keep: 7,
    cut: "clip-start",
    cell: (x) => (x.recent.length === 0 ? "-" : sparkline(x.recent)),
    color: (x) => (x.recent.length === 0 ? undefined : x.recent[x.recent.length - 1] ? "green" : "red")
  }
]

export interface HooksScreenProps {
  readonly rows: ReadonlyArray<HookRow> | undefined
  readonly filtered: boolean
  readonly cursor: number
  readonly height: number
  readonly width: number
  readonly now: number
}

export const HooksScreen = ({ rows, filtered, cursor, height, width, now }: HooksScreenProps) =>
  h(Table<HookRow>, {
    columns: columns(now),
    rows: rows ?? [],
    cursor,
    height,
    width,
    empty: emptyText(rows, filtered, "subscription", "No webhook subscriptions: integrations subscribe with POST /api/v1/hooks (docs/webhooks.md).")
  })
