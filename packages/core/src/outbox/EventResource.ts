/**
 * The resource each event kind is about (ruling 32): the deliveries of one subscription and one
 * resource are attempted one at a time, in commit order. Its key is the resource's collection and
 * id (`members/12`), the id being the `id` of the event's `data`.
 */
import type { EventKind } from "./Outbox.ts"

export const EventCollections: Readonly<Record<EventKind, string>> = {
  "member.created": "members",
  "member.updated": "members",
  "contact.created": "contacts",
  "invoice.issued": "invoices",
  "invoice.paid": "invoices",
  "event.registration.created": "registrations",
  "deal.approved": "deals",
  "contact.updated": "contacts",
  "event.created": "events",
  "event.updated": "events",
  "invoice.created": "invoices",
  "invoice.updated": "invoices",
  "payment.created": "payments",
  "deal.created": "deals",
  "deal.updated": "deals",
  "sponsorship.created": "sponsorships",
  "placement.created": "placements",
  "booking.created": "bookings"
}

/** The resource key of an event of kind `type` whose data is `data` (`members/12`). */
export const eventResource = (type: EventKind, data: unknown): string => `${EventCollections[type]}/${String((data as { readonly id: unknown }).id)}`
