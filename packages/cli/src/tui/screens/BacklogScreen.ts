/**
 * The webhook backlog (docs/admin.md "The backlog"): each subscription of the chamber with the
 * deliveries due now, how long the oldest has been due, those held behind an earlier one of
 * their resource, those waiting for a later retry, and its state; the longest-waiting first. The
 * figures are the same query as `chamber deliveries summary` and the metrics' backlog gauges.
 */
import { createElement as h } from "react"
import type { Backlog, SubscriptionBacklog } from "../AdminData.ts"
import { waited } from "../../Durations.ts"
import type { Column } from "../format.ts"
import { emptyText, Table } from "../Table.ts"
import { aboutToDeactivate } from "./HooksScreen.ts"

export const backlogText = (b: SubscriptionBacklog) => `#${b.id} ${b.url} ${stateOf(b)}`

const stateOf = (b: SubscriptionBacklog) => (!b.active ? "OFF" : aboutToDeactivate(b) ? "ENDING" : b.failure_count > 0 ? "failing" : "active")

/** The whole database's figures, in one line (the Backlog screen's context line). */
export const backlogTotal = (t: Backlog) =>
  `all chambers: ${t.due} due${t.due === 0 ? "" : `, oldest ${waited(t.oldest_due_seconds)}`}, ${t.held} held, ${t.inactive_subscriptions} inactive`

const columns: ReadonlyArray<Column<SubscriptionBacklog>> = [
  { header: "id", min: 3, keep: 10, cell: (b) => `#${b.id}` },
  { header: "url", min: 14, max: 48, grow: 4, keep: 9, cell: (b) => b.url.replace(/^https:\/\//, "") },
  {
    header: "state",
    min: 7,
    keep: 8,
    cell: stateOf,
    color: (b) => (!b.active ? "red" : b.failure_count > 0 ? "yellow" : "green")
  },
  { header: "fails", min: 5, keep: 5, align: "right", cell: (b) => String(b.failure_count), color: (b) => (b.failure_count === 0 ? undefined : "yellow") },
  { header: "due", min: 5, keep: 9, align: "right", cell: (b) => String(b.due), color: (b) => (b.due === 0 ? undefined : "yellow") },
  {
    header: "oldest due",
    min: 10,
    keep: 8,
    align: "right",
    cell: (b) => (b.due === 0 ? "-" : waited(b.oldest_due_seconds)),
    color: (b) => (b.due === 0 ? undefined : b.oldest_due_seconds >= 300 ? "red" : "yellow")
  },
  { header: "held", min: 5, keep: 7, align: "right", cell: (b) => String(b.held) },
  { header: "later", min: 5, keep: 6, align: "right", cell: (b) => String(b.later) }
]

export interface BacklogScreenProps {
  readonly rows: ReadonlyArray<SubscriptionBacklog> | undefined
  readonly filtered: boolean
  readonly cursor: number
  readonly height: number
  readonly width: number
}

export const BacklogScreen = ({ rows, filtered, cursor, height, width }: BacklogScreenProps) =>
  h(Table<SubscriptionBacklog>, {
    columns,
    rows: rows ?? [],
    cursor,
    height,
    width,
    empty: emptyText(
      rows,
      filtered,
      "subscription",
      "No webhook subscriptions, so no backlog: integrations subscribe with POST /api/v1/hooks (docs/webhooks.md)."
    )
  })
