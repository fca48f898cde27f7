/**
 * The transactional outbox port. `append` writes an event row in the caller's transaction;
 * the relay delivers it later. Nothing is published after commit, so nothing is lost.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"

export const EventKinds = [
  "member.created",
  "member.updated",
  "contact.created",
  "invoice.issued",
  "invoice.paid",
  "event.registration.created",
  "deal.approved",
  // Ruling 34: every other change of a resource.
  "contact.updated",
  "event.created",
  "event.updated",
  "invoice.created",
  "invoice.updated",
  "payment.created",
  "deal.created",
  "deal.updated",
  "sponsorship.created",
  "placement.created",
  "booking.created"
] as const
export type EventKind = (typeof EventKinds)[number]

export interface OutboxEvent {
  readonly id: string
  readonly tenant_id: number
  readonly type: EventKind
  readonly created_at: string
  /** The resource exactly as GET returns it inside `data`. */
  readonly data: unknown
}

/** An event to append: its kind, and the resource as GET returns it. */
export interface AppendedEvent {
  readonly type: EventKind
  readonly data: unknown
}

export class Outbox extends Context.Service<Outbox, {
  readonly append: (tenantId: number, type: EventKind, data: unknown) => Effect.Effect<OutboxEvent>
  /**
   * Each of `events`, in order, as `append` one after another would record them, deliveries
   * and holds included (an event about a resource an earlier one of them is about waits behind
   * it); for many events at once (an import's batches).
   */
  readonly appendAll: (tenantId: number, events: ReadonlyArray<AppendedEvent>) => Effect.Effect<void>
  /**
   * `self`, in the caller's transaction, with the events it appends for the tenant written when
   * it has succeeded, after everything else it writes, in the order appended and with the same
   * deliveries: for a transaction that appends many (an import). They are numbered in the change
   * feed as they are written, under the chamber's feed lock (held then to the commit), instead of
   * at the commit, which would write each event row a second time. What a savepoint of `self`
   * rolls back, its events included, stays rolled back.
   */
  readonly appendingAtEnd: <A, E, R>(tenantId: number, self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  readonly list: (tenantId: number, options?: { readonly type?: EventKind }) => Effect.Effect<ReadonlyArray<OutboxEvent>>
}>()("chamber/Outbox") {}
