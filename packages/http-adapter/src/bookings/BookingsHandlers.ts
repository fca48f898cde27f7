/** Bookings handlers: the schedule of BookingsGroup as one call of the core service. */
import * as Effect from "effect/Effect"
import { Bookings } from "@chamber/core"
import * as Kit from "../server/Kit.ts"
import { group } from "../server/Group.ts"
import { BookingList } from "./BookingsGroup.ts"

export const BookingsHandlers = group("bookings", Effect.fn(function*(handlers) {
  const bookings = yield* Bookings
  return handlers.handle("list", ({ query }) => Kit.page(BookingList, query.page, (tenant, page) => bookings.list(tenant, { ...query, page })))
}))
