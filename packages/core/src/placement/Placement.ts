/**
 * Advertising placements (docs/api.md "Placements"): the one declaration of a placement's
 * fields. A placement is a sponsorship row of kind `ad`; read through the API (the live ones
 * with a creative only), made by the core library (`Placements.create`).
 */
import * as F from "../resource/Field.ts"
import { defineResource } from "../resource/Resource.ts"
import { sortColumns } from "../Sort.ts"
import { SponsorshipStatuses } from "../sponsorship/Sponsorship.ts"

export const AdKinds = ["image", "text"] as const
export const PlacementSortColumns = sortColumns("starts_on", "created_at")

const HTTP = /^https?:\/\//i
const httpAddress = (example: string) => F.patterned(2048, HTTP, "an address starting with http:// or https://", example, F.HTTP_ADDRESS)

export const PlacementResource = defineResource("Placement", {
  member_id: F.nullable(F.bigInteger(1, 12)),
  ad_slot: F.nullable(F.text(255, "homepage_sidebar")),
  ad_kind: F.defaulted(F.oneOf(AdKinds, "image"), "text"),
  ad_headline: F.nullable(F.text(255, "Spring tune-up special")),
  ad_body: F.nullable(F.text(2000, "20% off every tune-up in April.")),
  ad_cta_label: F.nullable(F.text(255, "Book now")),
  ad_link_url: F.nullable(httpAddress("https://acme.example/spring")),
  ad_image_url: F.nullable(httpAddress("https://cdn.acme.example/spring.png")),
  is_house_ad: F.defaulted(F.boolean(false), false),
  is_included_benefit: F.defaulted(F.boolean(true), false),
  starts_on: F.nullable(F.date("2027-04-01")),
  ends_on: F.nullable(F.date("2027-04-30")),
  status: F.defaulted(F.oneOf(SponsorshipStatuses, "active"), "pending"),
  impressions: F.defaulted(F.bigInteger(0, 12_400), 0),
  clicks: F.defaulted(F.bigInteger(0, 310), 0),
  /** clicks / impressions, a fraction (not a percentage); 0 without impressions. */
  ctr: F.readOnly(F.decimal(0.025)),
  // Internal: taken by the core library and stored, never shown.
  amount_cents: F.writeOnly(F.bigInteger(0, 15_000)),
  invoice_id: F.writeOnly(F.bigInteger(1, 42)),
  notes: F.writeOnly(F.text(2000, "Paid by card at the expo."))
})

export const Placement = PlacementResource.Envelope
export type Placement = typeof Placement.Type
export type PlacementStored = ReturnType<typeof PlacementResource.defaults>
/** What `Placements.create` takes: every attribute but `ctr`, and the internal fields. */
export const PlacementCreate = PlacementResource.Create
export type PlacementCreate = typeof PlacementCreate.Type
