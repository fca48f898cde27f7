/**
 * What the admin TUI shows if drawing a screen ever throws: one line and a way out, never a
 * stack trace (docs/admin.md "When something goes wrong").
 */
import { useApp, useInput } from "ink"
import { Text } from "./Text.ts"
import { Component, createElement as h, type ReactNode } from "react"

const Crashed = ({ message }: { readonly message: string }) => {
  const { exit } = useApp()
  useInput((input) => {
    if (input === "q") exit()
  })
  return h(Text, { color: "red", wrap: "truncate" }, `The screen could not be drawn: ${message.split("\n")[0]} (q quits)`)
}

export class Boundary extends Component<{ readonly children: ReactNode }, { readonly message: string | undefined }> {
  override state = { message: undefined as string | undefined }
  static getDerivedStateFromError(error: unknown) {
    return { message: error instanceof Error ? error.message : String(error) }
  }
  override render() {
    return this.state.message === undefined ? this.props.children : h(Crashed, { message: this.state.message })
  }
}
