/**
 * A list as the admin TUI shows it (docs/admin.md): a header, then the page of rows that holds
 * the selection, one line each, never wrapped; `›` and reverse video mark the selected row.
 */
import { Box } from "ink"
import { Text } from "./Text.ts"
import { createElement as h, type ReactNode } from "react"
import { type Column, fit, GAP, place } from "./format.ts"

export interface TableProps<Row> {
  readonly columns: ReadonlyArray<Column<Row>>
  readonly rows: ReadonlyArray<Row>
  /** The selected row; undefined: none (a list only to read). */
  readonly cursor: number | undefined
  /** Lines, the header included. */
  readonly height: number
  readonly width: number
  /** What shows when there are no rows. */
  readonly empty: string
  readonly faded?: (row: Row) => boolean
}

const GUTTER = 2

/** Lines padded to `height` so what follows stays in place. */
export const Lines = ({ height, lines }: { readonly height: number; readonly lines: ReadonlyArray<ReactNode> }) =>
  h(Box, { flexDirection: "column", height }, ...lines.slice(0, height), ...Array.from({ length: Math.max(0, height - lines.length) }, (_, i) => h(Text, { key: `pad${i}` }, " ")))

/** What an empty table says: loading until its rows come, then that the filter hides them, else `none`. */
export const emptyText = (rows: ReadonlyArray<unknown> | undefined, filtered: boolean, what: string, none: string): string =>
  rows === undefined ? "Loading…" : filtered ? `No ${what} matches the filter: esc clears it.` : none

export const Table = <Row>({ columns, rows, cursor, height, width, empty, faded }: TableProps<Row>) => {
  const placed = place(columns, width - GUTTER, rows)
  const header = h(
    Text,
    { key: "header", bold: true, wrap: "truncate" },
    " ".repeat(GUTTER) + placed.map((p) => fit(p.column.header, p.width, "end", p.column.align)).join(" ".repeat(GAP))
  )
  if (rows.length === 0) return h(Lines, { height, lines: [header, h(Text, { key: "empty", dimColor: true, wrap: "truncate" }, "  " + empty)] })
  const page = Math.max(1, height - 1)
  const at = cursor === undefined ? undefined : Math.max(0, Math.min(cursor, rows.length - 1))
  const first = Math.floor((at ?? 0) / page) * page
  const lines = rows.slice(first, first + page).map((row, i) => {
    const chosen = first + i === at
    const cells = placed.flatMap((p, j) => {
      const text = fit(p.column.cell(row), p.width, p.column.cut, p.column.align)
      const cell = h(Text, { key: `c${j}`, color: chosen ? undefined : p.column.color?.(row) }, text)
      return j === 0 ? [cell] : [h(Text, { key: `g${j}` }, " ".repeat(GAP)), cell]
    })
    return h(
      Text,
      { key: `r${first + i}`, wrap: "truncate", inverse: chosen, dimColor: !chosen && faded?.(row) === true },
      chosen ? "› " : "  ",
      ...cells
    )
  })
  return h(Lines, { height, lines: [header, ...lines] })
}
