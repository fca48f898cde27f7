/**
 * A chamber's webhook deliveries (docs/admin.md "Replaying failed deliveries"): newest first,
 * by status and subscription; enter shows one delivery's attempts with status, latency and the
 * response's excerpt.
 */
import { Box } from "ink"
import { Text } from "../Text.ts"
import { createElement as h } from "react"
import type { AttemptView, DeliveryView } from "../AdminData.ts"
import { ago, type Column, cut } from "../format.ts"
import { emptyText, Lines, Table } from "../Table.ts"

export const deliveryText = (d: DeliveryView) => `${d.id} #${d.hook_id} ${d.type} ${d.status} ${d.event_id} ${d.url}`

export const statusColor = (status: DeliveryView["status"]) => (status === "failed" ? "red" : status === "succeeded" ? "green" : "yellow")

/** The last answer: an HTTP status, else the error's first words. */
const lastOf = (d: DeliveryView) => {
  const last = d.attempts[d.attempts.length - 1]
  return last === undefined ? "-" : last.status !== null ? String(last.status) : last.error ?? "-"
}

const columns = (now: number): ReadonlyArray<Column<DeliveryView>> => [
  { header: "id", min: 5, keep: 10, align: "right", cell: (d) => String(d.id) },
  { header: "sub", min: 4, keep: 7, cell: (d) => `#${d.hook_id}` },
  { header: "event", min: 14, max: 26, grow: 1, keep: 9, cell: (d) => d.type },
  { header: "status", min: 9, keep: 10, cell: (d) => d.status, color: (d) => statusColor(d.status) },
  { header: "tries", min: 5, keep: 6, align: "right", cell: (d) => String(d.attempt_count) },
  { header: "last", min: 7, grow: 1, max: 30, keep: 8, cell: lastOf },
  { header: "made", min: 8, keep: 5, cell: (d) => ago(d.created_at, now) },
  { header: "next", min: 8, keep: 4, cell: (d) => (d.status === "pending" ? ago(d.next_attempt_at, now, "-") : "-") }
]

export interface DeliveriesScreenProps {
  readonly rows: ReadonlyArray<DeliveryView> | undefined
  readonly filtered: boolean
  readonly narrowed: string | undefined
  readonly cursor: number
  readonly height: number
  readonly width: number
  readonly now: number
}

export const DeliveriesScreen = ({ rows, filtered, narrowed, cursor, height, width, now }: DeliveriesScreenProps) =>
  h(Table<DeliveryView>, {
    columns: columns(now),
    rows: rows ?? [],
    cursor,
    height,
    width,
    empty: emptyText(
      rows,
      filtered,
      "delivery",
      narrowed === undefined ? "No deliveries yet: each event a subscription lists makes one." : `No ${narrowed}: f changes the status, h the subscription.`
    )
  })

const attemptColumns = (now: number): ReadonlyArray<Column<AttemptView & { readonly n: number }>> => [
  { header: "#", min: 2, keep: 10, align: "right", cell: (a) => String(a.n) },
  { header: "when", min: 9, keep: 6, cell: (a) => ago(a.attempted_at, now) },
  { header: "status", min: 6, keep: 10, cell: (a) => (a.status === null ? "-" : String(a.status)), color: (a) => (a.status !== null && a.status < 300 && a.error === null ? "green" : "red") },
  { header: "latency", min: 8, keep: 8, align: "right", cell: (a) => `${a.latency_ms} ms` },
  { header: "response", min: 12, grow: 1, keep: 9, cell: (a) => (a.status !== null ? a.response_excerpt : a.error) || "-" }
]

export interface AttemptsScreenProps {
  readonly delivery: DeliveryView | undefined
  readonly height: number
  readonly width: number
  readonly now: number
}

/** One delivery: what it carries, then every attempt, oldest first (the latest ones when they do not all fit). */
export const AttemptsScreen = ({ delivery: d, height, width, now }: AttemptsScreenProps) => {
  if (d === undefined) return h(Lines, { height, lines: [h(Text, { key: "gone", dimColor: true }, "  That delivery is no longer in the list: esc goes back.")] })
  const head = [
    h(Text, { key: "h1", wrap: "truncate" }, h(Text, { bold: true }, cut(`Delivery ${d.id}`, width)), `  ${d.type} · `, h(Text, { color: statusColor(d.status) }, d.status), ` · ${d.attempt_count} ${d.attempt_count === 1 ? "try" : "tries"}`),
    h(Text, { key: "h2", wrap: "truncate" }, `  event ${d.event_id} · made ${ago(d.created_at, now)}${d.status === "pending" ? ` · next ${ago(d.next_attempt_at, now, "-")}` : ""}`),
    h(Text, { key: "h3", wrap: "truncate" }, `  to #${d.hook_id} ${d.url}`)
  ]
  const room = Math.max(2, height - head.length)
  const attempts = d.attempts.map((a, i) => ({ ...a, n: i + 1 })).slice(-(room - 1))
  return h(Box, { flexDirection: "column", height }, ...head, h(Table<AttemptView & { readonly n: number }>, {
    key: "attempts",
    columns: attemptColumns(now),
    rows: attempts,
    cursor: undefined,
    height: room,
    width,
    empty: "No attempts yet: it waits for a relay."
  }))
}
