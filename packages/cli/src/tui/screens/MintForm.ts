/**
 * Minting a key in four steps (docs/admin.md "Minting a key"): a name, the chamber_admin who
 * mints it, the scopes (every scope from core, with shortcuts for read and all), the daily
 * limit; then a last look, and the key shown once.
 */
import { Box } from "ink"
import { Text } from "../Text.ts"
import { createElement as h, type ReactNode } from "react"
import type { MintedKey } from "../AdminData.ts"
import { cut, wrap } from "../format.ts"
import { describeScopes } from "../../Views.ts"
import { type Overlay, SCOPES } from "../state.ts"
import { Lines } from "../Table.ts"

type Minting = Extract<Overlay, { kind: "mint" }>

export interface MintFormProps {
  readonly form: Minting
  readonly admins: ReadonlyArray<string> | undefined
  readonly chamber: string
  readonly height: number
  readonly width: number
}

const line = (key: string, text: ReactNode, props: Record<string, unknown> = {}) => h(Text, { key, wrap: "truncate", ...props }, text)

const SCOPES_LABEL = "  Scopes: "

/** Every chosen scope, named, wrapped under its label: what the key will be able to do, none of it cut. */
const scopeLines = (scopes: ReadonlyArray<string>, width: number): Array<ReactNode> => {
  const set = describeScopes(scopes)
  const head = set === scopes.join(",") ? `${scopes.length} of ${SCOPES.length}` : set
  const text = `${head}: ${scopes.join(", ")}`
  const indent = " ".repeat(SCOPES_LABEL.length)
  return wrap(text, Math.max(1, width - SCOPES_LABEL.length), Number.MAX_SAFE_INTEGER)
    .map((l, i) => line(`scopes${i}`, `${i === 0 ? SCOPES_LABEL : indent}${l}`))
}

export const MintForm = ({ form, admins, chamber, height, width }: MintFormProps) => {
  const lines: Array<ReactNode> = [line("title", `Mint a key for ${chamber}`, { bold: true })]
  const done = (step: Minting["step"]) => ["name", "as", "scopes", "limit", "review"].indexOf(form.step) > ["name", "as", "scopes", "limit", "review"].indexOf(step)
  const caret = "█"
  lines.push(line("name", form.step === "name" ? `  Name:   ${form.name}${caret}` : `  Name:   ${form.name}`))
  if (form.step === "name") {
    lines.push(line("nameHint", "  A label for the integration that will use it. enter: next · esc: cancel", { dimColor: true }))
  }
  if (done("as")) lines.push(line("as", `  As:     ${admins?.[form.as] ?? "?"}`))
  if (form.step === "as") {
    lines.push(line("asTitle", "  Minted by (only a chamber_admin may mint; ↑↓ choose, enter: next):"))
    if (admins === undefined) lines.push(line("asLoading", "    Loading…", { dimColor: true }))
    for (const [i, email] of (admins ?? []).entries()) {
      lines.push(line(`a${i}`, `${i === form.as ? "  › " : "    "}${email}`, { inverse: i === form.as }))
    }
  }
  if (done("scopes")) lines.push(...scopeLines(form.scopes, width))
  if (form.step === "scopes") {
    lines.push(line("scopesTitle", `  Scopes, ${form.scopes.length} of ${SCOPES.length} (space toggles · r every read scope · a all · n none · enter: next):`))
    const room = Math.max(3, height - lines.length)
    const first = Math.max(0, Math.min(form.cursor - Math.floor(room / 2), SCOPES.length - room))
    for (const [i, scope] of SCOPES.entries()) {
      if (i < first || i >= first + room) continue
      const chosen = form.scopes.includes(scope)
      lines.push(line(`s${i}`, `${i === form.cursor ? "  › " : "    "}[${chosen ? "x" : " "}] ${scope}`, { inverse: i === form.cursor, color: chosen ? "green" : undefined }))
    }
  }
  if (form.step === "limit" || form.step === "review") {
    lines.push(line("limit", `  Limit:  ${form.limit}${form.step === "limit" ? caret : ""} requests in any 24 hours`))
  }
  if (form.step === "limit") lines.push(line("limitHint", "  The daily ceiling (docs/operations.md \"Rate limits\"). enter: next · esc: back", { dimColor: true }))
  if (form.step === "review") {
    lines.push(line("blank", " "))
    lines.push(line("ask", "  Mint this key? y/n  (the key is shown once, next)", { bold: true, color: "yellow" }))
  }
  return h(Lines, { height, lines: lines.map((l) => h(Box, { key: (l as { key: string }).key, width }, l)) })
}

export interface MintedKeyProps {
  readonly minted: MintedKey
  /** It went to the clipboard too (OSC 52). */
  readonly copied: boolean
  readonly height: number
  readonly width: number
}

/** The key, once: nothing keeps it after this screen closes. */
export const MintedKeyScreen = ({ minted, copied, height, width }: MintedKeyProps) =>
  h(Lines, {
    height,
    lines: [
      line("t", cut(`Minted ${minted.name} (${minted.prefix}): ${describeScopes(minted.scopes)}`, width), { bold: true, color: "green" }),
      line("b1", " "),
      line("k", `  ${minted.key}`, { bold: true }),
      line("b2", " "),
      ...(copied
        ? [
          line("c1", "  Copied to your clipboard: paste it where it goes. It is never shown again.", { color: "yellow" }),
          line("c2", "  Nothing arrived? Select it with the mouse and copy it.", { dimColor: true })
        ]
        : [
          line("c1", "  Copy it now: it is never shown again.", { color: "yellow" }),
          line("c2", "  Select it with the mouse and copy it, then paste it where it goes.", { dimColor: true })
        ]),
      line("b3", " "),
      line("e", "  enter or esc: done", { dimColor: true })
    ]
  })
