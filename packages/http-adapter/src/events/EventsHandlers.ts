/** Events handlers: each endpoint of EventsGroup as one call of the core service. */
import * as Effect from "effect/Effect"
import { Events, Registrations } from "@chamber/core"
import * as Respond from "../server/Respond.ts"
import { groupHandlers } from "../shared/Served.ts"
import { EventList, EventResponse, EventsGroup, RegistrationList } from "./EventsGroup.ts"

export default groupHandlers(EventsGroup, Effect.fn(function*(handlers) {
  const events = yield* Events
  const registrations = yield* Registrations
  return handlers
    .handle("list", ({ query }) => Respond.page(EventList, query.page, (tenant, page) => events.list(tenant, { ...query, page })))
    .handle("create", ({ payload }) => Respond.single(EventResponse, 201, (tenant) => events.create(tenant, payload)))
    .handle("update", ({ params, payload }) => Respond.single(EventResponse, 200, (tenant) => events.update(tenant, params.event, payload)))
    .handle("registrations", ({ params, query }) =>
      Respond.page(RegistrationList, query.page, (tenant, page) => registrations.listForEvent(tenant, params.event, { ...query, page })))
}))
