/**
 * Bookings (docs/api.md "Bookings"): the one declaration of a booking's fields, schedule and
 * status only. Read through the API (confirmed, upcoming ones), made by the core library
 * (`Bookings.create`) with the visitor's details, which are stored and never shown.
 */
import * as Schema from "effect/Schema"
import * as F from "../resource/Field.ts"
import { defineResource } from "../resource/Resource.ts"
import { resourceScopes } from "../resource/ResourceScopes.ts"
import { sortColumns } from "../Sort.ts"

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
