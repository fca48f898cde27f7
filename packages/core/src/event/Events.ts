/**
 * Event use cases (docs/api.md "Events"): a new event is a draft unless published; cancelled and
 * completed are set by the service alone and are final; an event ends after it starts; an event
 * type that is not one of ours is the chamber's. Creating one fires event.created, and each change
 * of what it shows event.updated, in the write's transaction (ruling 34).
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { InvalidInput } from "../shared/Errors.ts"
import { Transactor } from "../shared/Ports.ts"
import { Outbox } from "../outbox/Outbox.ts"
import { changesShown } from "../outbox/Shown.ts"
import type { ListQuery, Page } from "../Pagination.ts"
import { parseSort } from "../Sort.ts"
import { slugify } from "../member/Member.ts"
import { type Event, type EventCreate, EventResource, EventSortColumns, type EventStored, EventTypes, type EventUpdate } from "./Event.ts"
import { EventEndsBeforeStart, EventNotFound } from "./EventErrors.ts"
import { EventRepo } from "./EventRepo.ts"

export type EventListQuery = ListQuery

const FINAL = new Set(["cancelled", "completed"])

/** `chamber` for a type that is omitted, null, or not one of ours. */
const eventType = (value: string | null | undefined) => (EventTypes as ReadonlyArray<string>).includes(value ?? "") ? value! : "chamber"

/** An event ends after it starts, or has no end (the import checks it before writing too). */
export const endsAfterStart = (values: Pick<EventStored, "starts_at" | "ends_at">) =>
  values.ends_at === null || Date.parse(values.ends_at) > Date.parse(values.starts_at)

/** What only an import gives an event it recreates (docs/cli.md "Import"): its slug as it was, made from the title unless given. */
export interface EventImported {
  readonly slug?: string | null | undefined
}

/**
 * The stored values of a new event (Events.create, an import's batches): its slug from its title
 * (or as imported), a type not one of ours `chamber`.
 */
export const newEvent = (input: EventCreate, imported?: EventImported): EventStored =>
  EventResource.defaults({ ...input, slug: imported?.slug ?? slugify(input.title, "event"), event_type: eventType(input.event_type) })

export class Events extends Context.Service<Events, {
  readonly list: (tenantId: number, query: EventListQuery) => Effect.Effect<Page<Event>>
  readonly get: (tenantId: number, id: number) => Effect.Effect<Event, EventNotFound>
  readonly create: (tenantId: number, input: EventCreate, imported?: EventImported) => Effect.Effect<Event, EventEndsBeforeStart>
  readonly update: (tenantId: number, id: number, input: EventUpdate) => Effect.Effect<Event, EventNotFound | EventEndsBeforeStart | InvalidInput>
  /** Ends an event for good (not through the API): cancelled or completed. */
  readonly end: (tenantId: number, id: number, status: "cancelled" | "completed") => Effect.Effect<Event, EventNotFound>
}>()("chamber/Events") {
  static readonly layer = Layer.effect(Events, Effect.gen(function*() {
    const repo = yield* EventRepo
    const outbox = yield* Outbox
    const tx = yield* Transactor

    /**
     * Writes `changes` and fires event.updated when what the event shows changed (`before`, read
     * as the caller locked the row), in the caller's transaction.
     */
    const write = Effect.fnUntraced(function*(tenantId: number, id: number, before: Event, changes: Partial<EventStored>) {
      const event = yield* repo.update(tenantId, id, changes)
      if (changesShown(before, event)) yield* outbox.append(tenantId, "event.updated", event)
      return event
    })

    const list = Effect.fn("Events.list")(function*(tenantId: number, query: EventListQuery) {
      return yield* repo.list(tenantId, parseSort(query.sort, EventSortColumns), query.page ?? 1, query.updated_since)
    })

    const get = Effect.fn("Events.get")(function*(tenantId: number, id: number) {
      const event = yield* repo.find(tenantId, id)
      if (event === undefined) return yield* new EventNotFound({ id })
      return event
    })

    const create = Effect.fn("Events.create")(function*(tenantId: number, input: EventCreate, imported?: EventImported) {
      const values = newEvent(input, imported)
      if (!endsAfterStart(values)) return yield* new EventEndsBeforeStart()
      // The insert, the read of the row it answers and its event commit together: a create that fails did not happen.
      return yield* tx.withTransaction(Effect.tap(repo.insert(tenantId, values), (event) => outbox.append(tenantId, "event.created", event)))
    })

    const update = Effect.fn("Events.update")(function*(tenantId: number, id: number, input: EventUpdate) {
      if (input.event_type === null) return yield* InvalidInput.field("event_type", "The event type field must not be null.")
      return yield* tx.withTransaction(Effect.gen(function*() {
        const locked = yield* repo.findForUpdate(tenantId, id)
        if (locked === undefined) return yield* new EventNotFound({ id })
        const current = locked.stored
        const changes = EventResource.changes(current, {
          ...input,
          // A final status stays whatever is sent; other fields may still change.
          status: FINAL.has(current.status) ? undefined : input.status,
          event_type: input.event_type === undefined ? undefined : eventType(input.event_type)
        })
        if (!endsAfterStart({ ...current, ...changes })) return yield* new EventEndsBeforeStart()
        if (Object.keys(changes).length === 0) return locked.shown
        return yield* write(tenantId, id, locked.shown, changes)
      }))
    })

    const end = Effect.fn("Events.end")(function*(tenantId: number, id: number, status: "cancelled" | "completed") {
      return yield* tx.withTransaction(Effect.gen(function*() {
        const locked = yield* repo.findForUpdate(tenantId, id)
        if (locked === undefined) return yield* new EventNotFound({ id })
        return yield* write(tenantId, id, locked.shown, { status })
      }))
    })

    return Events.of({ list, get, create, update, end })
  }))
}
