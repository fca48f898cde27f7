/**
 * The admin TUI (docs/admin.md): a chamber's keys, webhook subscriptions, deliveries and backlog
 * over an AdminData port. It loads without blocking (the last data stays while the next loads,
 * every 2 s), hands every key to state.ts, and runs the actions state.ts asks for.
 */
import { Box, useApp, useInput, useStdout } from "ink"
import { createElement as h, useEffect, useReducer, useRef, useState } from "react"
import type { AdminData, BacklogView, DeliveryView, HookRow, KeyRow, TenantRow } from "./AdminData.ts"
import { type Binding, EVERYWHERE, INSPECTING, MINT_STEPS, ON_SCREEN, SCREEN_TITLES } from "./keymap.ts"
import { perform } from "./perform.ts"
import { Context, Header, HelpBar, Status, type Tone } from "./screens/ScreenFrame.ts"
import { BacklogScreen, backlogText, backlogTotal } from "./screens/BacklogScreen.ts"
import { AttemptsScreen, DeliveriesScreen, deliveryText } from "./screens/DeliveriesScreen.ts"
import { HelpScreen } from "./screens/HelpScreen.ts"
import { aboutToDeactivate, hookText, HooksScreen } from "./screens/HooksScreen.ts"
import { keyText, KeysScreen } from "./screens/KeysScreen.ts"
import { MintedKeyScreen, MintForm } from "./screens/MintForm.ts"
import { RotatedSecretScreen } from "./screens/RotatedSecretScreen.ts"
import { tenantText, TenantsScreen } from "./screens/TenantsScreen.ts"
import { initialState, reduce, type Shown, type State } from "./state.ts"
import { wrap, wrapWithTail } from "./format.ts"
import { osc52 } from "./terminal.ts"
import { trackingLine } from "./tracking.ts"
import { asDataError, useLive } from "./useLive.ts"

export interface AppProps {
  readonly data: AdminData
  /** `--tenant`: the chamber to open. */
  readonly tenant?: string | undefined
  /** How often data reloads (docs/admin.md: 2 s). */
  readonly refreshMs?: number
  /** The terminal's size unless given. */
  readonly width?: number
  readonly height?: number
  /** The clock relative times are shown against. */
  readonly now?: () => number
  /** The terminal takes OSC 52 clipboard writes (terminal.ts): a minted key is copied to the clipboard. */
  readonly clipboard?: boolean
}

/** Every word of the filter, in any case, somewhere in the row's text. */
const matching = <A>(rows: ReadonlyArray<A> | undefined, filter: string, text: (a: A) => string): ReadonlyArray<A> | undefined => {
  const words = filter.toLowerCase().split(/\s+/).filter((w) => w !== "")
  if (rows === undefined || words.length === 0) return rows
  return rows.filter((r) => {
    const t = text(r).toLowerCase()
    return words.every((w) => t.includes(w))
  })
}

const useTerminalSize = () => {
  const { stdout } = useStdout()
  const [size, setSize] = useState({ columns: stdout.columns || 80, rows: stdout.rows || 24 })
  useEffect(() => {
    const resized = () => setSize({ columns: stdout.columns || 80, rows: stdout.rows || 24 })
    stdout.on("resize", resized)
    return () => void stdout.off("resize", resized)
  }, [stdout])
  return size
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`

export const App = ({ data, tenant: initialTenant, refreshMs = 2_000, width: fixedWidth, height: fixedHeight, now: clock = Date.now, clipboard = false }: AppProps) => {
  const terminal = useTerminalSize()
  const width = fixedWidth ?? terminal.columns
  // One line short of the terminal: the line after the last keeps the screen from scrolling.
  const height = fixedHeight ?? Math.max(8, terminal.rows - 1)
  const { exit } = useApp()
  const { write } = useStdout()
  const [state, dispatch] = useReducer(reduce, initialTenant, initialState)
  const { tenant, screen, refresh } = state
  // Relative times ("2m ago") move on even when no data changes.
  const [, setTick] = useState(0)
  useEffect(() => {
    const timer = setInterval(() => setTick((n) => n + 1), 10_000)
    return () => clearInterval(timer)
  }, [])
  const now = clock()

  const tenants = useLive("tenants", () => data.tenants(), refreshMs, refresh)
  const keys = useLive<ReadonlyArray<KeyRow>>(tenant !== undefined && screen === "keys" ? `keys ${tenant}` : undefined, () => data.keys(tenant!), refreshMs, refresh)
  const admins = useLive<ReadonlyArray<string>>(tenant !== undefined && screen === "keys" ? `admins ${tenant}` : undefined, () => data.admins(tenant!), refreshMs, refresh)
  const hooks = useLive<ReadonlyArray<HookRow>>(
    tenant !== undefined && (screen === "hooks" || screen === "deliveries") ? `hooks ${tenant}` : undefined,
    () => data.hooks(tenant!),
    refreshMs,
    refresh
  )
  const deliveries = useLive<ReadonlyArray<DeliveryView>>(
    tenant !== undefined && screen === "deliveries" ? `deliveries ${tenant} ${state.status} ${state.hookId}` : undefined,
    () => data.deliveries({ tenant: tenant!, status: state.status === "all" ? undefined : state.status, hookId: state.hookId }),
    refreshMs,
    refresh
  )
  const backlog = useLive<BacklogView>(tenant !== undefined && screen === "backlog" ? `backlog ${tenant}` : undefined, () => data.backlog(tenant!), refreshMs, refresh)
  const inspecting = screen === "deliveries" && state.inspect !== undefined
  // The inspected delivery by its id: it stays on screen when the list's filter no longer holds it.
  const inspectedById = useLive<ReadonlyArray<DeliveryView>>(
    tenant !== undefined && inspecting ? `inspect ${tenant} ${state.inspect}` : undefined,
    () => data.deliveries({ tenant: tenant!, ids: [state.inspect!] }),
    refreshMs,
    refresh
  )
  const tracking = state.tracking
  const tracked = useLive<ReadonlyArray<DeliveryView>>(
    tenant !== undefined && tracking !== undefined ? `tracked ${tenant} ${tracking.label} ${tracking.ids.length} ${tracking.ids[0]}` : undefined,
    () => data.deliveries({ tenant: tenant!, ids: tracking!.ids }),
    refreshMs,
    refresh
  )

  useEffect(() => {
    if (tenants.data !== undefined) dispatch({ type: "tenants", tenants: tenants.data })
  }, [tenants.data])

  const running = useRef<State["task"]>(undefined)
  useEffect(() => {
    const task = state.task
    if (task === undefined || running.current === task) return
    running.current = task
    perform(data, tenant ?? "", task, (done, total) => dispatch({ type: "progress", done, total })).then(
      (outcome) => dispatch({ type: "done", task, outcome }),
      (e: unknown) => {
        const error = asDataError(e)
        dispatch({ type: "failed", task, message: error.kind === "unavailable" ? `the database does not answer (${error.message})` : error.message })
      }
    )
  }, [state.task])

  useEffect(() => {
    if (state.quit) exit()
  }, [state.quit])

  const minted = state.overlay?.kind === "minted" ? state.overlay.key : undefined
  useEffect(() => {
    if (clipboard && minted !== undefined) write(osc52(minted.key))
  }, [minted])

  const filter = state.filter[screen]
  const listed = matching(deliveries.data, state.filter.deliveries, deliveryText) ?? []
  const shown: Shown = {
    tenants: matching(tenants.data, state.filter.tenants, tenantText) ?? [],
    keys: matching(keys.data, state.filter.keys, keyText) ?? [],
    hooks: matching(hooks.data, state.filter.hooks, hookText) ?? [],
    deliveries: listed,
    backlog: matching(backlog.data?.subscriptions, state.filter.backlog, backlogText) ?? [],
    inspected: inspecting ? inspectedById.data?.[0] ?? listed.find((d) => d.id === state.inspect) : undefined,
    allHooks: hooks.data ?? [],
    admins: admins.data,
    page: 1,
    now
  }

  // What is wrong with the data, if anything: the database first.
  const active = [tenants, ...(screen === "keys" ? [keys, admins] : []), ...(screen === "hooks" || screen === "deliveries" ? [hooks] : []), ...(screen === "deliveries" ? [deliveries] : []), ...(screen === "backlog" ? [backlog] : [])]
  const errors = active.flatMap((l) => (l.error === undefined ? [] : [l.error]))
  const down = errors.find((e) => e.kind === "unavailable")
  const statusLines: Array<{ text: string; tone: Tone; tail?: string }> = []
  if (down !== undefined) {
    statusLines.push({ text: `The database does not answer: ${down.message}`, tone: "error" })
    statusLines.push({ text: `Retrying every ${refreshMs / 1000} s · r to retry now · the last data stays on screen`, tone: "error" })
  }
  const o = state.overlay
  const progress = state.progress
  const notice = state.notice === undefined ? [] : [{ text: state.notice.text, tone: state.notice.tone }]
  if (o?.kind === "confirm" || o?.kind === "since") {
    statusLines.push(...notice)
    statusLines.push(o.kind === "confirm"
      ? { text: o.question, tone: "ask", tail: "  y/n" }
      : { text: "Replay failed deliveries since (30m, 2h, 1d ago or an ISO time): ", tone: "ask", tail: `${o.text}█` })
  } else if (state.task !== undefined) {
    statusLines.push(...notice)
    const verb = {
      mint: "Minting",
      revoke: "Revoking",
      reactivate: "Reactivating",
      replay: "Replaying",
      rotate: "Rotating the secret",
      findFailed: "Finding failed deliveries"
    }[state.task.kind]
    const bar = progress === undefined || progress.total === 0 ? "" : ` ${"█".repeat(Math.round((progress.done / progress.total) * 20)).padEnd(20, "░")} ${progress.done}/${progress.total}`
    statusLines.push({ text: `${verb}…${bar}`, tone: "busy" })
  } else if (notice.length > 0) statusLines.push(...notice)
  else if (down === undefined && errors.length > 0) statusLines.push({ text: errors[0]!.message, tone: "error" })
  else if (tracking !== undefined) statusLines.push(trackingLine(tracking, tracked.data))
  if (statusLines.length === 0) statusLines.push({ text: "", tone: "info" })
  // A long message takes two lines rather than losing its end; a question always ends with y/n.
  const wrapped = statusLines.flatMap((l) =>
    (l.tail === undefined ? wrap(l.text, width, 2) : wrapWithTail(l.text, l.tail, width, 2)).map((text) => ({ text, tone: l.tone }))
  )
  const bodyHeight = Math.max(3, height - 3 - wrapped.length)
  const page = Math.max(1, bodyHeight - 1)
  const shownNow: Shown = { ...shown, page }
  const shownRef = useRef(shownNow)
  shownRef.current = shownNow
  useInput((input, key) => dispatch({ type: "key", input, key, shown: shownRef.current }))

  const chamber = tenants.data?.find((t: TenantRow) => t.id === tenant)?.name ?? tenant
  const cursor = state.cursor[screen]
  const filtered = filter !== ""
  const hookName = (id: number) => {
    const hook = hooks.data?.find((x) => x.id === id)
    return hook === undefined ? `#${id}` : `#${id} ${hook.url.replace(/^https:\/\//, "")}`
  }
  const what = (() => {
    switch (screen) {
      case "tenants":
        return tenants.data === undefined ? "Chambers" : `Choose a chamber · ${plural(tenants.data.length, "chamber")}`
      case "keys": {
        const all = keys.data ?? []
        const revoked = all.filter((k) => k.revoked_at !== null).length
        return `Keys · ${plural(all.length, "key")}${revoked > 0 ? ` (${revoked} revoked)` : ""} · today: requests in the last 24 h / daily limit`
      }
      case "hooks": {
        const all = hooks.data ?? []
        const inactive = all.filter((x) => !x.active).length
        const ending = all.filter(aboutToDeactivate).length
        const states = [...(inactive > 0 ? [`${inactive} inactive`] : []), ...(ending > 0 ? [`${ending} about to be deactivated`] : [])]
        return `Subscriptions · ${plural(all.length, "subscription")}${states.length > 0 ? ` (${states.join(", ")})` : ""} · recent: ▁ ok █ failed`
      }
      case "deliveries":
        return inspecting
          ? `Deliveries › ${state.inspect}`
          : `Deliveries · ${state.status === "all" ? "every status" : state.status} · ${state.hookId === undefined ? "every subscription" : hookName(state.hookId)} · ${plural(shown.deliveries.length, "shown", "shown")}`
      case "backlog": {
        const rows = backlog.data?.subscriptions ?? []
        const due = rows.reduce((n, b) => n + b.due, 0)
        const held = rows.reduce((n, b) => n + b.held, 0)
        const mine = `Backlog · ${due} due, ${held} held`
        // The whole database's, as `chamber deliveries summary` and the gauges say it.
        return backlog.data === undefined ? "Backlog" : `${mine} · ${backlogTotal(backlog.data.total)}`
      }
    }
  })()

  const body = (() => {
    const size = { height: bodyHeight, width }
    if (o?.kind === "help") return h(HelpScreen, { screen, ...size })
    if (o?.kind === "mint") return h(MintForm, { form: o, admins: admins.data, chamber: chamber ?? "", ...size })
    if (o?.kind === "minted") return h(MintedKeyScreen, { minted: o.key, copied: clipboard, ...size })
    if (o?.kind === "rotated") return h(RotatedSecretScreen, { rotated: o.rotated, ...size })
    switch (screen) {
      case "tenants":
        return h(TenantsScreen, { rows: shown.tenants.length > 0 || tenants.data !== undefined ? shown.tenants : undefined, filtered, cursor, now, ...size })
      case "keys":
        return h(KeysScreen, { rows: keys.data === undefined ? undefined : shown.keys, filtered, cursor, now, ...size })
      case "hooks":
        return h(HooksScreen, { rows: hooks.data === undefined ? undefined : shown.hooks, filtered, cursor, now, ...size })
      case "backlog":
        return h(BacklogScreen, { rows: backlog.data === undefined ? undefined : shown.backlog, filtered, cursor, ...size })
      case "deliveries":
        if (inspecting) return h(AttemptsScreen, { delivery: shown.inspected, now, ...size })
        return h(DeliveriesScreen, {
          rows: deliveries.data === undefined ? undefined : shown.deliveries,
          filtered,
          narrowed: state.status === "all" && state.hookId === undefined
            ? undefined
            : `${state.status === "all" ? "" : `${state.status} `}deliveries${state.hookId === undefined ? "" : ` of ${hookName(state.hookId)}`}`,
          cursor,
          now,
          ...size
        })
    }
  })()

  const bindings: ReadonlyArray<Binding> = o?.kind === "mint"
    ? MINT_STEPS[o.step]
    : o?.kind === "confirm"
    ? [{ keys: "y", does: "", short: "yes" }, { keys: "n", does: "", short: "no" }]
    : o?.kind === "since" || o?.kind === "filter"
    ? [{ keys: "enter", does: "", short: "done" }, { keys: "esc", does: "", short: "cancel" }]
    : o?.kind === "minted" || o?.kind === "rotated" || o?.kind === "help"
    ? [{ keys: "esc", does: "", short: "close" }]
    : [...(inspecting ? INSPECTING : ON_SCREEN[screen]), ...EVERYWHERE]

  return h(
    Box,
    { flexDirection: "column", width, height },
    h(Header, { chamber, screen, width }),
    h(Context, { what: o?.kind === "help" ? `Help · ${SCREEN_TITLES[screen]}` : what, filter: filtered ? filter : undefined, typing: o?.kind === "filter", width }),
    body,
    h(Status, { lines: wrapped, width }),
    h(HelpBar, { bindings, width })
  )
}
