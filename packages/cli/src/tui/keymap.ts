/**
 * The admin TUI's key bindings (docs/admin.md "Keys"): one table for the help bar, the `?`
 * screen and the docs. state.ts does what they say.
 */
export type Screen = "tenants" | "keys" | "hooks" | "deliveries" | "backlog"

export interface Binding {
  /** The keys as the help shows them. */
  readonly keys: string
  /** What they do, in the `?` screen. */
  readonly does: string
  /** The help bar's word for it; absent: only in the `?` screen. */
  readonly short?: string
}

export const SCREEN_TITLES: Readonly<Record<Screen, string>> = {
  tenants: "Chambers",
  keys: "Keys",
  hooks: "Subscriptions",
  deliveries: "Deliveries",
  backlog: "Backlog"
}

export const EVERYWHERE: ReadonlyArray<Binding> = [
  { keys: "tab 1-4", does: "next view, or view 1 to 4", short: "views" },
  { keys: "↑↓ j k", does: "move" },
  { keys: "pgup pgdn", does: "a page up, a page down" },
  { keys: "g G", does: "first, last" },
  { keys: "/", does: "filter the list", short: "filter" },
  { keys: "esc", does: "back out, clear the filter" },
  { keys: "r", does: "refresh now, retry now" },
  { keys: "t", does: "choose another chamber" },
  { keys: "?", does: "all keys", short: "all keys" },
  { keys: "q", does: "quit", short: "quit" }
]

export const ON_SCREEN: Readonly<Record<Screen, ReadonlyArray<Binding>>> = {
  tenants: [{ keys: "enter", does: "open the chamber", short: "open" }],
  keys: [
    { keys: "n", does: "mint a key (shown once)", short: "mint" },
    { keys: "d", does: "revoke the key (asks)", short: "revoke" }
  ],
  hooks: [
    { keys: "enter", does: "its deliveries", short: "deliveries" },
    { keys: "a", does: "reactivate it (asks)", short: "reactivate" },
    { keys: "A", does: "reactivate all inactive", short: "all" },
    { keys: "P", does: "replay its failed (asks)", short: "replay failed" },
    { keys: "s", does: "rotate its secret (asks)", short: "rotate secret" }
  ],
  deliveries: [
    { keys: "enter", does: "attempts (esc: back)", short: "attempts" },
    { keys: "f", does: "status: all, failed, …", short: "status" },
    { keys: "h", does: "subscription: all, each", short: "subscription" },
    { keys: "p", does: "replay it (asks)", short: "replay" },
    { keys: "P", does: "replay the sub's failed", short: "replay failed" },
    { keys: "S", does: "replay failed since a time", short: "since" }
  ],
  backlog: [{ keys: "enter", does: "its waiting deliveries", short: "deliveries" }]
}

/** While a delivery's attempts show. */
export const INSPECTING: ReadonlyArray<Binding> = [
  { keys: "esc", does: "back to the list", short: "back" },
  { keys: "↑↓", does: "the previous or next delivery", short: "prev/next" },
  { keys: "p", does: "replay it (asks)", short: "replay" }
]

/** The help bar while minting, step by step; MINTING is the `?` screen's. */
export const MINT_STEPS: Readonly<Record<"name" | "as" | "scopes" | "limit" | "review", ReadonlyArray<Binding>>> = {
  name: [{ keys: "enter", does: "", short: "next" }, { keys: "esc", does: "", short: "cancel" }],
  as: [{ keys: "↑↓", does: "", short: "choose" }, { keys: "enter", does: "", short: "next" }, { keys: "esc", does: "", short: "back" }],
  scopes: [
    { keys: "space", does: "", short: "toggle" },
    { keys: "r", does: "", short: "read" },
    { keys: "a", does: "", short: "all" },
    { keys: "n", does: "", short: "none" },
    { keys: "enter", does: "", short: "next" },
    { keys: "esc", does: "", short: "back" }
  ],
  limit: [{ keys: "enter", does: "", short: "next" }, { keys: "esc", does: "", short: "back" }],
  review: [{ keys: "y", does: "", short: "mint" }, { keys: "n", does: "", short: "cancel" }, { keys: "esc", does: "", short: "back" }]
}

export const MINTING: ReadonlyArray<Binding> = [
  { keys: "space", does: "choose or drop a scope", short: "toggle" },
  { keys: "r a n", does: "read scopes, all, none", short: "read/all/none" },
  { keys: "enter", does: "next step", short: "next" },
  { keys: "esc", does: "step back, or cancel", short: "back" }
]
