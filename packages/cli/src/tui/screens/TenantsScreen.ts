/** The chambers to choose from (docs/admin.md "Choosing a chamber"). */
import { createElement as h } from "react"
import type { TenantRow } from "../AdminData.ts"
import { ago, type Column } from "../format.ts"
import { emptyText, Table } from "../Table.ts"

export const tenantText = (t: TenantRow) => `${t.name} ${t.id}`

const columns = (now: number): ReadonlyArray<Column<TenantRow>> => [
  { header: "chamber", min: 16, grow: 1, keep: 10, cell: (t) => t.name },
  { header: "id", min: 20, keep: 8, cell: (t) => t.id },
  { header: "created", min: 9, keep: 4, cell: (t) => ago(t.created_at, now) }
]

export interface TenantsScreenProps {
  readonly rows: ReadonlyArray<TenantRow> | undefined
  readonly filtered: boolean
  readonly cursor: number
  readonly height: number
  readonly width: number
  readonly now: number
}

export const TenantsScreen = ({ rows, filtered, cursor, height, width, now }: TenantsScreenProps) =>
  h(Table<TenantRow>, {
    columns: columns(now),
    rows: rows ?? [],
    cursor,
    height,
    width,
    empty: emptyText(rows, filtered, "chamber", "No chambers yet: create one with chamber tenant create --name …")
  })
