/**
 * The one Text of the admin TUI: ink's Text with every string it holds made inert (Inert.ts), so
 * nothing a receiver, an import file or an API client wrote can act on the terminal, whichever
 * screen shows it. Each control character becomes one visible character, so widths fitted
 * before stay right. Screens import Text from here, never from ink (a test holds them to it).
 */
import { Text as InkText } from "ink"
import { createElement as h, type ReactNode } from "react"
import { inert } from "../Inert.ts"

type InkTextProps = Parameters<typeof InkText>[0]

/** The children with each string made inert as one line; elements (other Texts) as they are. */
const inertChildren = (children: ReactNode): ReactNode =>
  typeof children === "string" ? inert(children) : Array.isArray(children) ? children.map(inertChildren) : children

export const Text = ({ children, ...props }: InkTextProps) => h(InkText, props, inertChildren(children))
