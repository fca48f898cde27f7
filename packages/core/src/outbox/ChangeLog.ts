/**
 * The change log port (ruling 29): every event of a chamber by its position, the order in which
 * the transactions that fired them committed. A position is given at commit, so every position a
 * read sees has all smaller ones of its chamber visible too.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { EventKind } from "./Outbox.ts"

/** One event as the feed and a delivery show it (ruling 20), with its position; `data` as JSON text, as stored. */
export interface LoggedEvent {
  readonly position: bigint
  readonly id: string
  readonly type: EventKind
  readonly created_at: string
  readonly dataJson: string
}

export class ChangeLog extends Context.Service<ChangeLog, {
  /** The chamber's events after `after` of the given kinds, oldest first, at most `limit`. */
  readonly after: (tenantId: number, after: bigint, types: ReadonlyArray<EventKind>, limit: number) => Effect.Effect<ReadonlyArray<LoggedEvent>>
  /** The chamber's newest position (or the highest pruned one when that is higher; 0 when none). */
  readonly head: (tenantId: number) => Effect.Effect<bigint>
  /** The highest position of the chamber that was pruned (0 when none). */
  readonly prunedThrough: (tenantId: number) => Effect.Effect<bigint>
  /**
   * Deletes up to `batch` events created before `before`, of any chamber, with their settled
   * deliveries; an event a pending delivery still refers to is kept until it settles. Answers
   * how many were deleted.
   */
  readonly prune: (before: Date, batch: number) => Effect.Effect<number>
}>()("chamber/ChangeLog") {}
