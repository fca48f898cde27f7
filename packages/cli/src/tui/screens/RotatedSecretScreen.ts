/**
 * A subscription's new signing secret, shown once (docs/admin.md "Rotating a secret"): the old
 * one keeps signing beside it until the time shown.
 */
import { Text } from "../Text.ts"
import { createElement as h, type ReactNode } from "react"
import type { RotatedSecret } from "../AdminData.ts"
import { cut } from "../format.ts"
import { Lines } from "../Table.ts"

const line = (key: string, text: ReactNode, props: Record<string, unknown> = {}) => h(Text, { key, wrap: "truncate", ...props }, text)

export interface RotatedSecretProps {
  readonly rotated: RotatedSecret
  readonly height: number
  readonly width: number
}

export const RotatedSecretScreen = ({ rotated, height, width }: RotatedSecretProps) =>
  h(Lines, {
    height,
    lines: [
      line("t", cut(`New signing secret for #${rotated.id} ${rotated.url}`, width), { bold: true, color: "green" }),
      line("b1", " "),
      line("s", `  ${rotated.secret}`, { bold: true }),
      line("b2", " "),
      line("c1", "  Give it to the receiver now: it is never shown again.", { color: "yellow" }),
      line("c2", cut(`  The previous secret signs beside it until ${rotated.previous_expires_at}.`, width), { dimColor: true }),
      line("b3", " "),
      line("e", "  enter or esc: done", { dimColor: true })
    ]
  })
