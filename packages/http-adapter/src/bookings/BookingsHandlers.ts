/** Bookings handlers: the schedule of BookingsGroup as one call of the core service. */
import * as Effect from "effect/Effect"
import { Bookings } from "@chamber/core"
import * as Respond from "../server/Respond.ts"
import { groupHandlers } from "../shared/Served.ts"
import { BookingList, BookingsGroup } from "./BookingsGroup.ts"

export default groupHandlers(BookingsGroup, Effect.fn(function*(handlers) {
  const bookings = yield* Bookings
  return handlers.handle("list", ({ query }) => Respond.page(BookingList, query.page, (tenant, page) => bookings.list(tenant, { ...query, page })))
}))
