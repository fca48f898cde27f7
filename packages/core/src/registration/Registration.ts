/** Event registrations (docs/api.md "Events"): read through the API, made by the core library and imports. */
import * as F from "../resource/Field.ts"
import { defineResource } from "../resource/Resource.ts"
import { resourceScopes } from "../resource/ResourceScopes.ts"
import { sortColumns } from "../Sort.ts"

export const RegistrationScopes = resourceScopes("registrations", ["read"])

/** Registrations are listed by registration time; `sort` offers only `updated_at`. */
export const RegistrationSortColumns = sortColumns()

export const RegistrationStatuses = ["registered", "waitlisted", "cancelled", "attended"] as const

export const RegistrationResource = defineResource("Registration", {
  event_id: F.readOnly(F.bigInteger(1, 3)),
  member_id: F.nullable(F.bigInteger(1, 12)),
  contact_id: F.nullable(F.bigInteger(1, 7)),
  first_name: F.nullable(F.text(255, "Ann")),
  last_name: F.nullable(F.text(255, "Lee")),
  email: F.nullable(F.email(255, "ann.lee@acme.example")),
  status: F.defaulted(F.oneOf(RegistrationStatuses, "registered"), "registered"),
  source: F.nullable(F.text(255, "website")),
  price_cents: F.nullable(F.bigInteger(0, 7500)),
  guest_count: F.nullable(F.integer(0, 10_000, 1)),
  registered_at: F.nullable(F.dateTime("2026-12-01T15:04:05.000Z")),
  checked_in_at: F.nullable(F.dateTime("2027-01-10T18:12:00.000Z"))
})

export const Registration = RegistrationResource.Envelope
export type Registration = typeof Registration.Type
export type RegistrationStored = ReturnType<typeof RegistrationResource.defaults>
export const RegistrationCreate = RegistrationResource.Create
export type RegistrationCreate = typeof RegistrationCreate.Type
