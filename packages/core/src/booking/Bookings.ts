/**
 * Bookings (docs/api.md "Bookings"), the whole of the resource in core: its scope, the one
 * declaration of a booking's fields (schedule and status only), the storage port, and the
 * service. Read through the API (confirmed, upcoming ones), made by the core library
 * (`Bookings.create`) with the visitor's details, which are stored and never shown; each fires
 * booking.created in its transaction (ruling 34).
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { ContactRepo } from "../contact/ContactRepo.ts"
import { MemberRepo } from "../member/MemberRepo.ts"
import type { ListQuery, Page } from "../Pagination.ts"
import * as F from "../resource/Field.ts"
import { defineResource } from "../resource/Resource.ts"
import { resourceScopes } from "../resource/ResourceScopes.ts"
import { InvalidInput } from "../shared/Errors.ts"
import { randomBase62 } from "../shared/Ids.ts"
import { decodeInput, requireOwn } from "../shared/Input.ts"
import { Transactor } from "../shared/Ports.ts"
import { Outbox } from "../outbox/Outbox.ts"
import { parseSort, sortColumns, type SortOrder } from "../Sort.ts"

/** bookings:read is opt-in: the `read` shorthand leaves it out (docs/api.md "Authentication and scopes"). */
export const BookingScopes = resourceScopes("bookings", ["read"], { optIn: true })

export const BookingStatuses = ["confirmed", "cancelled"] as const
export const BookingSortColumns = sortColumns("starts_at", "created_at")

const bookingTypeId = F.bigInteger(1, 2)

export const BookingResource = defineResource("Booking", {
  booking_type_id: F.readOnly(bookingTypeId),
  /** The booking type's current name, read with the row. */
  booking_type_name: F.readOnlyNullable(F.text(255, "Meeting room")),
  starts_at: F.nullable(F.dateTime("2027-01-12T15:00:00.000Z")),
  ends_at: F.nullable(F.dateTime("2027-01-12T16:00:00.000Z")),
  status: F.defaulted(F.oneOf(BookingStatuses, "confirmed"), "confirmed"),
  cancelled_at: F.nullable(F.dateTime("2027-01-10T09:00:00.000Z")),
  member_id: F.nullable(F.bigInteger(1, 12)),
  contact_id: F.nullable(F.bigInteger(1, 7)),
  // Internal: taken by the core library and stored, never shown.
  visitor_name: F.writeOnly(F.text(255, "Ann Lee")),
  visitor_email: F.writeOnly(F.email(255, "ann.lee@acme.example")),
  visitor_phone: F.writeOnly(F.text(50, "555-0100")),
  notes: F.writeOnly(F.text(2000, "Needs a projector.")),
  location: F.writeOnly(F.text(255, "Chamber office, room A")),
  cancel_token: F.writeOnly(F.text(255, "pQ3xV8b2Lk9sT1mN4rW7yZ0aC5dE6fG"))
})

export const Booking = BookingResource.Envelope
export type Booking = typeof Booking.Type
export type BookingStored = ReturnType<typeof BookingResource.defaults>

/**
 * What `Bookings.create` takes: the writable fields, and the booking type by `booking_type_id`
 * (one of the tenant's) or by `booking_type_name` (the tenant's type of that name, made when
 * there is none); the id wins when both are given.
 */
export const BookingCreate = Schema.Struct({
  ...BookingResource.Create.fields,
  booking_type_id: Schema.optionalKey(Schema.NullOr(bookingTypeId.schema)),
  booking_type_name: Schema.optionalKey(Schema.NullOr(F.filledText(255, "Meeting room").schema))
}).annotate({ identifier: "BookingCreate" })
export type BookingCreate = typeof BookingCreate.Type

export type BookingSort = SortOrder<(typeof BookingSortColumns)[number]>

/** Storage port for bookings and their types. Every method is scoped by tenant. */
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

export type BookingListQuery = ListQuery

/**
 * The stored values of a new booking of type `bookingTypeId` (Bookings.create, an import's
 * batches): a cancelled one without `cancelled_at` cancelled `now`, a random `cancel_token` unless given.
 */
export const newBooking = (input: BookingCreate, bookingTypeId: number, now: Date): BookingStored =>
  BookingResource.defaults({
    ...input,
    booking_type_id: bookingTypeId,
    cancelled_at: input.cancelled_at ?? (input.status === "cancelled" ? now.toISOString() : null),
    cancel_token: input.cancel_token ?? randomBase62(32)
  })

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
    const outbox = yield* Outbox
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
      const now = new Date()
      return yield* tx.withTransaction(Effect.gen(function*() {
        const values = newBooking(input, yield* bookingType(tenantId, input), now)
        const booking = yield* repo.insert(tenantId, values)
        yield* outbox.append(tenantId, "booking.created", booking)
        return booking
      }))
    })

    return Bookings.of({ list, create })
  }))
}
