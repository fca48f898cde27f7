/**
 * Event registrations (docs/api.md "Events"): listed by the API, made by the core library (and
 * imports). A registration and its event.registration.created event commit together.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Transactor } from "../shared/Ports.ts"
import type { InvalidInput } from "../shared/Errors.ts"
import { requireOwn } from "../shared/Input.ts"
import { Outbox } from "../outbox/Outbox.ts"
import type { ListQuery, Page } from "../Pagination.ts"
import { parseSort } from "../Sort.ts"
import { ContactRepo } from "../contact/ContactRepo.ts"
import { EventNotFound } from "../event/EventErrors.ts"
import { EventRepo } from "../event/EventRepo.ts"
import { MemberRepo } from "../member/MemberRepo.ts"
import { type Registration, type RegistrationCreate, RegistrationResource, RegistrationSortColumns } from "./Registration.ts"
import { RegistrationRepo } from "./RegistrationRepo.ts"

/** The stored values of a new registration (Registrations.create, an import's batches): registered `now` unless given. */
export const newRegistration = (eventId: number, input: RegistrationCreate, now: Date) =>
  RegistrationResource.defaults({ ...input, event_id: eventId, registered_at: input.registered_at ?? now.toISOString() })

export class Registrations extends Context.Service<Registrations, {
  readonly listForEvent: (tenantId: number, eventId: number, query?: ListQuery) => Effect.Effect<Page<Registration>, EventNotFound>
  /** Registers for an event of the tenant; a member or contact named must be the tenant's too. */
  readonly create: (tenantId: number, eventId: number, input: RegistrationCreate) => Effect.Effect<Registration, EventNotFound | InvalidInput>
}>()("chamber/Registrations") {
  static readonly layer = Layer.effect(Registrations, Effect.gen(function*() {
    const repo = yield* RegistrationRepo
    const events = yield* EventRepo
    const members = yield* MemberRepo
    const contacts = yield* ContactRepo
    const outbox = yield* Outbox
    const tx = yield* Transactor

    const eventOf = (tenantId: number, eventId: number) =>
      Effect.flatMap(events.find(tenantId, eventId), (event) => (event === undefined ? Effect.fail(new EventNotFound({ id: eventId })) : Effect.void))

    const listForEvent = Effect.fn("Registrations.listForEvent")(function*(tenantId: number, eventId: number, query: ListQuery = {}) {
      yield* eventOf(tenantId, eventId)
      return yield* repo.listForEvent(tenantId, eventId, parseSort(query.sort, RegistrationSortColumns), query.page ?? 1, query.updated_since)
    })

    const create = Effect.fn("Registrations.create")(function*(tenantId: number, eventId: number, input: RegistrationCreate) {
      yield* eventOf(tenantId, eventId)
      yield* requireOwn("member_id", input.member_id, (id) => members.find(tenantId, id))
      yield* requireOwn("contact_id", input.contact_id, (id) => contacts.find(tenantId, id))
      const values = newRegistration(eventId, input, new Date())
      return yield* tx.withTransaction(
        Effect.tap(repo.insert(tenantId, values), (registration) => outbox.append(tenantId, "event.registration.created", registration))
      )
    })

    return Registrations.of({ listForEvent, create })
  }))
}
