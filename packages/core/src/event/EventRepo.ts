/** Storage port for events. Every method is scoped by tenant. */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { Page } from "../Pagination.ts"
import type { Locked } from "../shared/Ports.ts"
import type { SortOrder } from "../Sort.ts"
import type { Event, EventSortColumns, EventStored } from "./Event.ts"

export type EventSort = SortOrder<(typeof EventSortColumns)[number]>

export class EventRepo extends Context.Service<EventRepo, {
  readonly list: (tenantId: number, sort: EventSort | undefined, page: number, updatedSince?: string) => Effect.Effect<Page<Event>>
  readonly find: (tenantId: number, id: number) => Effect.Effect<Event | undefined>
  /** Every stored field, write-only ones included, and what the API shows, read once and locked for an update in this transaction. */
  readonly findForUpdate: (tenantId: number, id: number) => Effect.Effect<Locked<EventStored, Event> | undefined>
  readonly insert: (tenantId: number, values: EventStored) => Effect.Effect<Event>
  readonly update: (tenantId: number, id: number, changes: Partial<EventStored>) => Effect.Effect<Event>
}>()("chamber/EventRepo") {}
