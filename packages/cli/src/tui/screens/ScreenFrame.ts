/**
 * What frames every screen of the admin TUI (docs/admin.md "The screen"): the header with the
 * chamber and the views, the line saying what the list holds, the status line, and the help bar
 * with the keys of the current view.
 */
import { Box } from "ink"
import { Text } from "../Text.ts"
import { createElement as h } from "react"
import { cut, fit } from "../format.ts"
import type { Binding, Screen } from "../keymap.ts"
import { SCREEN_TITLES } from "../keymap.ts"
import { VIEWS } from "../state.ts"

export interface HeaderProps {
  readonly chamber: string | undefined
  readonly screen: Screen
  readonly width: number
}

const SHORT_TITLES: Readonly<Record<Screen, string>> = { ...SCREEN_TITLES, hooks: "Subs" }

export const Header = ({ chamber, screen, width }: HeaderProps) => {
  const narrow = width < 72
  // The short titles below 100 columns: the chamber's name keeps its room beside four views.
  const tabs = VIEWS.map((v, i) => ({ v, text: ` ${i + 1} ${(width < 100 ? SHORT_TITLES : SCREEN_TITLES)[v]} ` }))
  const tabsWidth = tabs.reduce((n, t) => n + t.text.length, 0)
  const title = chamber === undefined ? "chamber tui" : narrow ? chamber : `chamber tui · ${chamber}`
  return h(
    Text,
    { wrap: "truncate" },
    h(Text, { bold: true }, fit(title, Math.max(0, width - tabsWidth - 1))),
    " ",
    ...tabs.map((t) => h(Text, { key: t.v, inverse: t.v === screen, bold: t.v === screen }, t.v === screen ? `[${t.text.trim()}]`.padStart(t.text.length) : t.text))
  )
}

export interface ContextProps {
  readonly what: string
  /** The filter as typed; undefined when there is none. */
  readonly filter: string | undefined
  readonly typing: boolean
  readonly width: number
}

export const Context = ({ what, filter, typing, width }: ContextProps) => {
  const right = filter === undefined && !typing ? "" : typing ? ` /${filter ?? ""}█` : ` /${filter} (esc clears)`
  return h(
    Text,
    { wrap: "truncate" },
    h(Text, { dimColor: true }, fit(what, Math.max(0, width - right.length))),
    h(Text, { color: "cyan" }, right)
  )
}

export type Tone = "ok" | "error" | "info" | "ask" | "busy"

const TONE_COLORS: Readonly<Record<Tone, string>> = { ok: "green", error: "red", info: "cyan", ask: "yellow", busy: "cyan" }

export interface StatusProps {
  readonly lines: ReadonlyArray<{ readonly text: string; readonly tone: Tone }>
  readonly width: number
}

export const Status = ({ lines, width }: StatusProps) =>
  h(
    Box,
    { flexDirection: "column", height: Math.max(1, lines.length) },
    ...(lines.length === 0 ? [h(Text, { key: "none" }, " ")] : lines.map((l, i) =>
      h(Text, { key: `s${i}`, wrap: "truncate", color: TONE_COLORS[l.tone], bold: l.tone === "ask" || l.tone === "error" }, cut(l.text, width))
    ))
  )

export interface HelpBarProps {
  readonly bindings: ReadonlyArray<Binding>
  readonly width: number
}

/** As many of the bindings as fit, in order; the last two (`?` and `q`) always. */
export const HelpBar = ({ bindings, width }: HelpBarProps) => {
  const items = bindings.filter((b) => b.short !== undefined).map((b) => ({ key: b.keys.split(" ")[0]!, label: b.short! }))
  const size = (xs: typeof items) => xs.reduce((n, x) => n + x.key.length + 1 + x.label.length, 0) + 2 * Math.max(0, xs.length - 1)
  const kept = [...items]
  while (kept.length > 2 && size(kept) > width) kept.splice(kept.length - 3, 1)
  return h(
    Text,
    { wrap: "truncate" },
    ...kept.flatMap((x, i) => [
      ...(i === 0 ? [] : [h(Text, { key: `sep${i}` }, "  ")]),
      h(Text, { key: `k${i}`, bold: true, color: "cyan" }, x.key),
      h(Text, { key: `l${i}` }, ` ${x.label}`)
    ])
  )
}
