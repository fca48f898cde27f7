/** Hot Deals (docs/api.md "Deals"): the one declaration of a deal's fields. */
import * as F from "../resource/Field.ts"
import { defineResource } from "../resource/Resource.ts"
import { resourceScopes } from "../resource/ResourceScopes.ts"
import { sortColumns } from "../Sort.ts"

export const DealScopes = resourceScopes("deals", ["read", "write"])

export const DealStatuses = ["pending", "approved", "rejected"] as const
export const DealAudiences = ["public", "members"] as const
export const DealSortColumns = sortColumns("created_at")

export const DealResource = defineResource("Deal", {
  member_id: F.required(F.bigInteger(1, 12)),
  title: F.required(F.filledText(255, "20% off tune-ups")),
  slug: F.readOnlyNullable(F.text(255, "20-off-tune-ups")),
  discount_label: F.nullable(F.text(40, "20% off")),
  status: F.defaulted(F.oneOf(DealStatuses, "approved"), "pending"),
  audience: F.defaulted(F.oneOf(DealAudiences, "members"), "public"),
  starts_at: F.nullable(F.dateTime("2027-01-01T00:00:00.000Z")),
  ends_at: F.nullable(F.dateTime("2027-12-31T23:59:59.000Z")),
  is_featured: F.defaulted(F.boolean(true), false),
  description: F.writeOnly(F.text(2000, "Bring this deal to the front desk.")),
  terms: F.writeOnly(F.text(500, "One per customer.")),
  cta_url: F.writeOnly(F.patterned(255, /^https?:\/\//i, "an address starting with http:// or https://", "https://acme.example/deal", F.HTTP_ADDRESS))
})

export const Deal = DealResource.Envelope
export type Deal = typeof Deal.Type
export type DealStored = ReturnType<typeof DealResource.defaults>
export const DealCreate = DealResource.Create
export type DealCreate = typeof DealCreate.Type
export const DealUpdate = DealResource.Update
export type DealUpdate = typeof DealUpdate.Type
