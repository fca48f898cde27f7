/** The booking schedule (docs/api.md "Bookings"): the contract only. */
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import { BookingResource, BookingSortColumns } from "@chamber/core"
import { Authentication, Idempotent } from "../shared/Access.ts"
import { listEndpoint } from "../shared/Endpoints.ts"

export const BookingList = BookingResource.List

export class BookingsGroup extends HttpApiGroup.make("bookings")
  .add(
    listEndpoint("/", BookingList, {
      access: "bookings:read",
      sort: BookingSortColumns,
      summary: "List upcoming bookings",
      description:
        "Only confirmed bookings that start now or later; schedule and status only, never the visitor's details. " +
        "`bookings:read` is opt-in: the `read` shorthand of key minting leaves it out, so a key must be given it by name. " +
        "100 a page. `sort`: starts_at, -starts_at, created_at, -created_at, updated_at or -updated_at (default: soonest first); anything else means " +
        "the default. `booking_type_name` is the booking type's current name."
    })
  )
  .middleware(Idempotent).middleware(Authentication)
  .prefix("/api/v1/bookings")
  .annotateMerge(OpenApi.annotations({ description: "Bookings (read only): the chamber's upcoming booking schedule." })) {}
