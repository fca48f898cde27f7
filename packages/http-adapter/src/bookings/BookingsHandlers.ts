/** Bookings handlers: the schedule of BookingsGroup as one call of the core service. */
import * as Effect from "effect/Effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { Bookings } from "@chamber/core"
import { Api } from "../Api.ts"
import * as Respond from "../server/Respond.ts"
import { BookingList } from "./BookingsGroup.ts"

export const BookingsHandlers = HttpApiBuilder.group(Api, "bookings", Effect.fn(function*(handlers) {
  const bookings = yield* Bookings
  return handlers.handle("list", ({ query }) => Respond.page(BookingList, query.page, (tenant, page) => bookings.list(tenant, { ...query, page })))
}))
