/**
 * Text for the admin TUI's cells (docs/admin.md): fitted to a width without ever wrapping,
 * relative times, compact counts and the attempts sparkline.
 */

/** Characters, not UTF-16 units: what a terminal cell holds for the text we show. */
const chars = (text: string) => [...text]

/** How a cell too long for its column is cut: `…` at the end or the start, or its start simply left out. */
export type Cut = "end" | "start" | "clip-start"

/** `text` in exactly `width` cells: cut as `cut` says, else padded. */
export const fit = (text: string, width: number, cut: Cut = "end", align: "left" | "right" = "left"): string => {
  if (width <= 0) return ""
  const cs = chars(text.replace(/[\r\n\t]+/g, " "))
  if (cs.length > width && cut === "clip-start") return cs.slice(cs.length - width).join("")
  if (cs.length > width) {
    if (width === 1) return "…"
    return cut === "end" ? cs.slice(0, width - 1).join("") + "…" : "…" + cs.slice(cs.length - width + 1).join("")
  }
  const pad = " ".repeat(width - cs.length)
  return align === "left" ? cs.join("") + pad : pad + cs.join("")
}

/** A line cut to `width` cells, never padded. */
export const cut = (text: string, width: number): string => {
  const cs = chars(text)
  return cs.length <= width ? text : cs.slice(0, Math.max(0, width - 1)).join("") + "…"
}

/** `text` in lines of at most `width` cells, broken between words, at most `max` lines (the last cut with …). */
export const wrap = (text: string, width: number, max: number): ReadonlyArray<string> => {
  const lines: Array<string> = []
  let line = ""
  for (const word of text.split(" ")) {
    if (line === "") line = word
    else if (chars(line).length + 1 + chars(word).length <= width) line += ` ${word}`
    else {
      lines.push(line)
      line = word
    }
  }
  lines.push(line)
  if (lines.length <= max) return lines.map((l) => cut(l, width))
  return [...lines.slice(0, max - 1), cut(lines.slice(max - 1).join(" "), width)].map((l) => cut(l, width))
}

/** Like wrap, but `tail` always ends the last line (a question's `y/n`). */
export const wrapWithTail = (text: string, tail: string, width: number, max: number): ReadonlyArray<string> => {
  const lines = [...wrap(text, width, max)]
  const last = lines[lines.length - 1]!
  if (chars(last).length + chars(tail).length <= width) lines[lines.length - 1] = last + tail
  else if (lines.length < max) lines.push(tail.trimStart())
  else lines[lines.length - 1] = cut(last, width - chars(tail).length) + tail
  return lines
}

/** How long ago (or, for a time to come, how long until): `12s ago`, `5m ago`, `in 3h`, `never`. */
export const ago = (iso: string | null, now: number, never = "never"): string => {
  if (iso === null) return never
  const at = Date.parse(iso)
  if (Number.isNaN(at)) return iso
  const ms = now - at
  const s = Math.round(Math.abs(ms) / 1000)
  const span = s < 60 ? `${s}s` : s < 3600 ? `${Math.floor(s / 60)}m` : s < 86_400 ? `${Math.floor(s / 3600)}h` : `${Math.floor(s / 86_400)}d`
  if (s < 60 * 60 * 24 * 365) return ms >= 0 ? (s < 2 ? "just now" : `${span} ago`) : `in ${span}`
  return iso.slice(0, 10)
}

/** `950`, `1.2k`, `25k`, `2.1G`: a count in at most 5 cells. */
export const compact = (n: number): string => {
  if (n < 1000) return String(n)
  for (const [size, unit] of [[1e9, "G"], [1e6, "M"], [1e3, "k"]] as const) {
    if (n >= size) {
      const v = n / size
      return `${v < 10 && !Number.isInteger(v) ? v.toFixed(1).replace(/\.0$/, "") : Math.floor(v)}${unit}`
    }
  }
  return String(n)
}

/** The sparkline's cells (docs/admin.md "Subscriptions"): ▁ an attempt answered 2xx, █ one that failed; oldest left. */
export const SPARK_OK = "▁"
export const SPARK_FAILED = "█"
export const sparkline = (recent: ReadonlyArray<boolean>): string => recent.map((ok) => (ok ? SPARK_OK : SPARK_FAILED)).join("")

/** A column of a table: its width is at least `min`; `grow` shares the room left; low `keep` goes first when narrow. */
export interface Column<Row> {
  readonly header: string
  readonly min: number
  readonly max?: number
  readonly grow?: number
  readonly keep: number
  readonly cell: (row: Row) => string
  readonly color?: (row: Row) => string | undefined
  readonly cut?: Cut
  readonly align?: "left" | "right"
}

export interface Placed<Row> {
  readonly column: Column<Row>
  readonly width: number
}

export const GAP = 1

/**
 * The columns that fit `width` cells (dropping the least kept first) and the width of each: room
 * left goes to the growing columns, none wider than its longest cell.
 */
export const place = <Row>(columns: ReadonlyArray<Column<Row>>, width: number, rows: ReadonlyArray<Row> = []): ReadonlyArray<Placed<Row>> => {
  const longest = (c: Column<Row>) => rows.reduce((n, r) => Math.max(n, chars(c.cell(r)).length), chars(c.header).length)
  const widest = new Map(columns.map((c) => [c, Math.max(c.min, Math.min(c.max ?? Infinity, rows.length === 0 ? Infinity : longest(c)))]))
  let shown = [...columns]
  const needed = (cs: ReadonlyArray<Column<Row>>) => cs.reduce((n, c) => n + c.min, 0) + GAP * Math.max(0, cs.length - 1)
  while (shown.length > 1 && needed(shown) > width) {
    const least = shown.reduce((a, b) => (b.keep < a.keep ? b : a))
    shown = shown.filter((c) => c !== least)
  }
  const widths = shown.map((c) => c.min)
  let room = width - needed(shown)
  while (room > 0) {
    const growing = shown.map((c, i) => ({ c, i })).filter(({ c, i }) => (c.grow ?? 0) > 0 && widths[i]! < widest.get(c)!)
    if (growing.length === 0) break
    const total = growing.reduce((n, { c }) => n + c.grow!, 0)
    let given = 0
    for (const { c, i } of growing) {
      const share = Math.max(1, Math.floor((room * c.grow!) / total))
      const add = Math.min(share, widest.get(c)! - widths[i]!, room - given)
      widths[i]! += add
      given += add
      if (given >= room) break
    }
    if (given === 0) break
    room -= given
  }
  if (shown.length === 1) widths[0] = Math.min(widths[0]!, width)
  return shown.map((column, i) => ({ column, width: widths[i]! }))
}
