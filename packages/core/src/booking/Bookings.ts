/**
 * Booking use cases (docs/api.md "Bookings"): confirmed, upcoming bookings are listed;
 * embedders (imports, demo data) make them with the visitor's details, which are stored and
 * never shown. No event fires for them.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { InvalidInput } from "../shared/Errors.ts"
import { randomBase62 } from "../shared/Ids.ts"
import { decodeInput, requireOwn } from "../shared/Input.ts"
import { Transactor } from "../shared/Ports.ts"
import type { ListQuery, Page } from "../Pagination.ts"
import { parseSort } from "../Sort.ts"
import { ContactRepo } from "../contact/ContactRepo.ts"
import { MemberRepo } from "../member/MemberRepo.ts"
import { type Booking, BookingCreate, BookingResource, BookingSortColumns } from "./Booking.ts"
import { BookingRepo } from "./BookingRepo.ts"

export type BookingListQuery = ListQuery

export class Bookings extends Context.Service<Bookings, {
  readonly list: (tenantId: number, query: BookingListQuery) => Effect.Effect<Page<Booking>>
  /**
   * Makes a booking (not exposed over HTTP). `input` is checked by `BookingCreate`; the booking
   * type is `booking_type_id` (the tenant's) or the tenant's type named `booking_type_name`
   * (made when there is none); a member or contact named must be the tenant's; `cancel_token`
   * is random when not given; a cancelled booking without `cancelled_at` is cancelled now.
   */
  readonly create: (tenantId: number, input: BookingCreate) => Effect.Effect<Booking, InvalidInput>
}>()("chamber/Bookings") {
  static readonly layer = Layer.effect(Bookings, Effect.gen(function*() {
    const repo = yield* BookingRepo
    const members = yield* MemberRepo
    const contacts = yield* ContactRepo
    const tx = yield* Transactor

    const list = Effect.fn("Bookings.list")(function*(tenantId: number, query: BookingListQuery) {
      return yield* repo.listUpcoming(tenantId, new Date().toISOString(), parseSort(query.sort, BookingSortColumns), query.page ?? 1, query.updated_since)
    })

    const bookingType = Effect.fn("Bookings.bookingType")(function*(tenantId: number, input: BookingCreate) {
      if (input.booking_type_id != null) {
        if (yield* repo.hasBookingType(tenantId, input.booking_type_id)) return input.booking_type_id
        return yield* InvalidInput.field("booking_type_id", "The selected booking type id is invalid.")
      }
      if (input.booking_type_name != null) return yield* repo.bookingTypeNamed(tenantId, input.booking_type_name.trim())
      return yield* InvalidInput.field("booking_type_id", "The booking type id field is required when booking type name is not present.")
    })

    const create = Effect.fn("Bookings.create")(function*(tenantId: number, raw: BookingCreate) {
      const input = yield* decodeInput(BookingCreate, raw)
      yield* requireOwn("member_id", input.member_id, (id) => members.find(tenantId, id))
      yield* requireOwn("contact_id", input.contact_id, (id) => contacts.find(tenantId, id))
      const cancelledAt = input.cancelled_at ?? (input.status === "cancelled" ? new Date().toISOString() : null)
      return yield* tx.withTransaction(Effect.gen(function*() {
        const values = BookingResource.defaults({
          ...input,
          booking_type_id: yield* bookingType(tenantId, input),
          cancelled_at: cancelledAt,
          cancel_token: input.cancel_token ?? randomBase62(32)
        })
        return yield* repo.insert(tenantId, values)
      }))
    })

    return Bookings.of({ list, create })
  }))
}
