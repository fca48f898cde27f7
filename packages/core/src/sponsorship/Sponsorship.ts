/**
 * Sponsorships (docs/api.md "Sponsorships"): the one declaration of a sponsorship's fields.
 * Read through the API (the live ones only), made by the core library (`Sponsorships.create`).
 * Placements are the sponsorship rows of kind `ad` and have their own declaration.
 */
import * as F from "../resource/Field.ts"
import { defineResource } from "../resource/Resource.ts"
import { resourceScopes } from "../resource/ResourceScopes.ts"
import { sortColumns } from "../Sort.ts"

export const SponsorshipScopes = resourceScopes("sponsorships", ["read"])

/** The statuses of sponsorships and placements alike. */
export const SponsorshipStatuses = ["pending", "active", "fulfilled", "cancelled"] as const
/** The kinds of sponsorship the sponsorships feed lists; `ad` rows are placements. */
export const SponsorshipKinds = ["tier", "logo_wall"] as const
export const SponsorshipSortColumns = sortColumns("starts_on", "created_at")

export const SponsorshipResource = defineResource("Sponsorship", {
  member_id: F.nullable(F.bigInteger(1, 12)),
  /** The member's current name, read with the row; null without a member. */
  member_name: F.readOnlyNullable(F.text(255, "Acme & Sons, LLC")),
  name: F.nullable(F.text(255, "Gold sponsor 2027")),
  status: F.defaulted(F.oneOf(SponsorshipStatuses, "active"), "pending"),
  starts_on: F.nullable(F.date("2027-01-01")),
  ends_on: F.nullable(F.date("2027-12-31")),
  sponsorship_package_id: F.nullable(F.bigInteger(1, 4)),
  tier: F.nullable(F.text(255, "Gold")),
  event_id: F.nullable(F.bigInteger(1, 3)),
  // Internal: taken by the core library and stored, never shown.
  kind: F.writeOnly(F.oneOf(SponsorshipKinds, "tier")),
  amount_cents: F.writeOnly(F.bigInteger(0, 250_000)),
  invoice_id: F.writeOnly(F.bigInteger(1, 41)),
  notes: F.writeOnly(F.text(2000, "Logo on the gala banner."))
})

export const Sponsorship = SponsorshipResource.Envelope
export type Sponsorship = typeof Sponsorship.Type
export type SponsorshipStored = ReturnType<typeof SponsorshipResource.defaults>
/** What `Sponsorships.create` takes: every attribute but `member_name`, and the internal fields. */
export const SponsorshipCreate = SponsorshipResource.Create
export type SponsorshipCreate = typeof SponsorshipCreate.Type
