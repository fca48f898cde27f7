/**
 * A chamber's API keys (docs/admin.md "Minting a key"): prefix, name, scopes, created, last
 * used, revoked, and today's use against the daily ceiling (rolling 24 hours, docs/operations.md
 * "Rate limits").
 */
import { createElement as h } from "react"
import type { KeyRow } from "../AdminData.ts"
import { ago, type Column, compact } from "../format.ts"
import { describeScopes } from "../../Views.ts"
import { emptyText, Table } from "../Table.ts"

export const keyText = (k: KeyRow) => `${k.name} ${k.prefix} ${k.scopes.join(" ")} ${k.revoked_at === null ? "live" : "revoked"}`

/** `1.2k/25k`; `-` for a revoked key or one whose use is not known. */
export const todayOf = (k: KeyRow) => (k.used_today === null ? "-" : `${compact(k.used_today)}/${compact(k.daily_limit)}`)

const columns = (now: number): ReadonlyArray<Column<KeyRow>> => [
  { header: "name", min: 14, max: 28, grow: 2, keep: 10, cell: (k) => k.name },
  { header: "prefix", min: 12, keep: 10, cell: (k) => k.prefix },
  { header: "scopes", min: 13, grow: 3, keep: 7, cell: (k) => describeScopes(k.scopes) },
  {
    header: "today",
    min: 9,
    keep: 8,
    align: "right",
    cell: todayOf,
    color: (k) => (k.used_today !== null && k.used_today >= k.daily_limit ? "red" : k.used_today !== null && k.used_today >= k.daily_limit * 0.8 ? "yellow" : undefined)
  },
  { header: "created", min: 8, keep: 4, cell: (k) => ago(k.created_at, now) },
  { header: "last use", min: 8, keep: 6, cell: (k) => ago(k.last_used_at, now) },
  {
    header: "state",
    min: 7,
    keep: 9,
    cell: (k) => (k.revoked_at === null ? "live" : "revoked"),
    color: (k) => (k.revoked_at === null ? "green" : "red")
  }
]

export interface KeysScreenProps {
  readonly rows: ReadonlyArray<KeyRow> | undefined
  readonly filtered: boolean
  readonly cursor: number
  readonly height: number
  readonly width: number
  readonly now: number
}

export const KeysScreen = ({ rows, filtered, cursor, height, width, now }: KeysScreenProps) =>
  h(Table<KeyRow>, {
    columns: columns(now),
    rows: rows ?? [],
    cursor,
    height,
    width,
    faded: (k) => k.revoked_at !== null,
    empty: emptyText(rows, filtered, "key", "No keys yet: press n to mint one.")
  })
