/** Events handlers: each endpoint of EventsGroup as one call of the core service. */
import * as Effect from "effect/Effect"
import { Events, Registrations } from "@chamber/core"
import * as Kit from "../server/Kit.ts"
import { group } from "../server/Group.ts"
import { EventList, EventResponse, RegistrationList } from "./EventsGroup.ts"

export const EventsHandlers = group("events", Effect.fn(function*(handlers) {
  const events = yield* Events
  const registrations = yield* Registrations
  return handlers
    .handle("list", ({ query }) => Kit.page(EventList, query.page, (tenant, page) => events.list(tenant, { ...query, page })))
    .handle("create", ({ payload }) => Kit.single(EventResponse, 201, (tenant) => events.create(tenant, payload)))
    .handle("update", ({ params, payload }) => Kit.single(EventResponse, 200, (tenant) => events.update(tenant, params.event, payload)))
    .handle("registrations", ({ params, query }) =>
      Kit.page(RegistrationList, query.page, (tenant, page) => registrations.listForEvent(tenant, params.event, page)))
}))
