/** Every key, from keymap.ts (docs/admin.md "Keys"): what `?` shows. */
import { Box } from "ink"
import { Text } from "../Text.ts"
import { createElement as h, type ReactNode } from "react"
import { fit } from "../format.ts"
import { type Binding, EVERYWHERE, MINTING, ON_SCREEN, type Screen, SCREEN_TITLES } from "../keymap.ts"

const KEYS = 10

const section = (title: string, bindings: ReadonlyArray<Binding>, width: number): Array<ReactNode> => [
  h(Text, { key: title, bold: true, wrap: "truncate" }, title),
  ...bindings.map((b) =>
    h(Text, { key: `${title}${b.keys}`, wrap: "truncate" }, h(Text, { color: "cyan" }, fit(b.keys, KEYS)), " ", fit(b.does, Math.max(1, width - KEYS - 1)))
  )
]

export interface HelpScreenProps {
  readonly screen: Screen
  readonly height: number
  readonly width: number
}

export const HelpScreen = ({ screen, height, width }: HelpScreenProps) => {
  const sections: ReadonlyArray<readonly [string, ReadonlyArray<Binding>]> = [
    ["Everywhere", EVERYWHERE],
    [SCREEN_TITLES.tenants, ON_SCREEN.tenants],
    [SCREEN_TITLES.keys, ON_SCREEN.keys],
    [SCREEN_TITLES.backlog, ON_SCREEN.backlog],
    [SCREEN_TITLES.hooks, ON_SCREEN.hooks],
    [SCREEN_TITLES.deliveries, ON_SCREEN.deliveries],
    ["Minting", MINTING],
  ]
  const title = h(Text, { key: "title", bold: true, wrap: "truncate" }, "All keys  (esc or ? closes)")
  const room = height - 1
  if (width >= 76) {
    const half = Math.floor((width - 2) / 2)
    const left = sections.slice(0, 4).flatMap(([t, b]) => section(t, b, half))
    const right = sections.slice(4).flatMap(([t, b]) => section(t, b, half))
    return h(Box, { flexDirection: "column", height },
      title,
      h(Box, { flexDirection: "row", height: room },
        h(Box, { flexDirection: "column", width: half, marginRight: 2 }, ...left.slice(0, room)),
        h(Box, { flexDirection: "column", width: half }, ...right.slice(0, room))))
  }
  // Narrow: this screen's keys first, then the rest, as many as fit.
  const mine = sections.filter(([t]) => t === SCREEN_TITLES[screen])
  const lines = [...mine, ...sections.filter((s) => !mine.includes(s))].flatMap(([t, b]) => section(t, b, width))
  return h(Box, { flexDirection: "column", height }, title, ...lines.slice(0, room))
}
