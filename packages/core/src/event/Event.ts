/** Events (docs/api.md "Events"): the one declaration of an event's fields. */
import * as F from "../resource/Field.ts"
import { defineResource } from "../resource/Resource.ts"
import { resourceScopes } from "../resource/ResourceScopes.ts"
import { sortColumns } from "../Sort.ts"

export const EventScopes = resourceScopes("events", ["read", "write"])

export const EventStatuses = ["draft", "published", "cancelled", "completed"] as const
export type EventStatus = (typeof EventStatuses)[number]
/** The statuses a client may set; the service alone ends an event (cancelled, completed). */
export const SettableEventStatuses = ["draft", "published"] as const
export const EventTypes = ["chamber", "member", "community"] as const

export const EventSortColumns = sortColumns("starts_at", "created_at")

export const EventResource = defineResource("Event", {
  title: F.required(F.filledText(255, "Annual Gala")),
  slug: F.readOnly(F.text(255, "annual-gala")),
  status: F.defaulted(F.stateOf(EventStatuses, SettableEventStatuses, "published"), "draft"),
  venue: F.nullable(F.text(255, "Riverside Grand Hall")),
  city: F.nullable(F.text(255, "Riverside")),
  state: F.nullable(F.text(255, "CA")),
  starts_at: F.required(F.dateTime("2027-01-10T18:00:00.000Z")),
  ends_at: F.nullable(F.dateTime("2027-01-10T22:00:00.000Z")),
  capacity: F.nullable(F.integer(1, 2_147_483_647, 250)),
  is_public: F.defaulted(F.boolean(true), false),
  description: F.writeOnly(F.text(10_000, "Dinner, awards and dancing.")),
  address: F.writeOnly(F.text(255, "1 River Rd")),
  event_type: F.writeOnly(F.text(255, "chamber")),
  is_featured: F.writeOnly(F.boolean(true))
})

export const Event = EventResource.Envelope
export type Event = typeof Event.Type
export type EventStored = ReturnType<typeof EventResource.defaults>
export const EventCreate = EventResource.Create
export type EventCreate = typeof EventCreate.Type
export const EventUpdate = EventResource.Update
export type EventUpdate = typeof EventUpdate.Type
