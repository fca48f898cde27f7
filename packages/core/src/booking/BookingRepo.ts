/** Storage port for bookings and their types. Every method is scoped by tenant. */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { Page } from "../Pagination.ts"
import type { SortOrder } from "../Sort.ts"
import type { Booking, BookingSortColumns, BookingStored } from "./Booking.ts"

export type BookingSort = SortOrder<(typeof BookingSortColumns)[number]>

export class BookingRepo extends Context.Service<BookingRepo, {
  /**
   * The confirmed bookings starting at or after `now` (ISO 8601) (docs/api.md "Bookings"),
   * by default the soonest first.
   */
  readonly listUpcoming: (tenantId: number, now: string, sort: BookingSort | undefined, page: number, updatedSince?: string) => Effect.Effect<Page<Booking>>
  readonly insert: (tenantId: number, values: BookingStored) => Effect.Effect<Booking>
  readonly hasBookingType: (tenantId: number, id: number) => Effect.Effect<boolean>
  /** The id of the tenant's booking type named `name`, made when there is none (one under concurrency). */
  readonly bookingTypeNamed: (tenantId: number, name: string) => Effect.Effect<number>
}>()("chamber/BookingRepo") {}
