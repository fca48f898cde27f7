/**
 * The read-only feeds' declarations (docs/api.md "Sponsorships", "Placements", "Bookings"):
 * exactly the attributes the API shows, never an internal field, and the create inputs of the
 * core library checked by their schemas with the messages embedders see (InvalidInput).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import {
  BookingCreate,
  BookingResource,
  decodeInput,
  PlacementCreate,
  PlacementResource,
  SponsorshipCreate,
  SponsorshipResource
} from "../src/index.ts"

/** The attributes of the spec's tables 2.9, 2.10 and 2.11, in their order. */
const SHOWN = {
  Sponsorship: ["member_id", "member_name", "name", "status", "starts_on", "ends_on", "sponsorship_package_id", "tier", "event_id"],
  Placement: [
    "member_id", "ad_slot", "ad_kind", "ad_headline", "ad_body", "ad_cta_label", "ad_link_url", "ad_image_url", "is_house_ad",
    "is_included_benefit", "starts_on", "ends_on", "status", "impressions", "clicks", "ctr"
  ],
  Booking: ["booking_type_id", "booking_type_name", "starts_at", "ends_at", "status", "cancelled_at", "member_id", "contact_id"]
}

/** Stored and never shown. */
const INTERNAL = {
  Sponsorship: ["kind", "amount_cents", "invoice_id", "notes"],
  Placement: ["amount_cents", "invoice_id", "notes"],
  Booking: ["visitor_name", "visitor_email", "visitor_phone", "notes", "location", "cancel_token"]
}

const resources = [SponsorshipResource, PlacementResource, BookingResource] as const

/** The `errors` of InvalidInput when `schema` refuses `input`, or undefined when it takes it. */
const errorsOf = (schema: Parameters<typeof decodeInput>[0], input: unknown) =>
  decodeInput(schema, input).pipe(
    Effect.map(() => undefined),
    Effect.catchTag("InvalidInput", (e) => Effect.succeed(e.errors))
  )

describe("the feeds' declarations", () => {
  for (const resource of resources) {
    it(`${resource.name}: exactly the attributes of the spec, in its order; the internal fields stored, never shown`, () => {
      assert.deepStrictEqual([...resource.keys], SHOWN[resource.name])
      assert.deepStrictEqual(Object.keys(resource.Attributes.fields), SHOWN[resource.name])
      assert.deepStrictEqual(Object.keys(resource.example), SHOWN[resource.name])
      assert.deepStrictEqual(resource.storedKeys.filter((k) => !resource.keys.includes(k as never)), INTERNAL[resource.name])
    })
  }

  it("the placement example's ctr is its clicks / impressions", () => {
    const { clicks, impressions, ctr } = PlacementResource.example
    assert.strictEqual(ctr, clicks / impressions)
  })

  it.effect("create inputs: the examples with their internal fields are taken; derived fields are not inputs", () =>
    Effect.gen(function*() {
      assert.isUndefined(yield* errorsOf(SponsorshipCreate, { ...SponsorshipResource.example, kind: "logo_wall", amount_cents: 1, invoice_id: 2, notes: "n" }))
      assert.isUndefined(yield* errorsOf(PlacementCreate, { ...PlacementResource.example, amount_cents: 1, invoice_id: 2, notes: "n" }))
      assert.isUndefined(yield* errorsOf(BookingCreate, { ...BookingResource.example, visitor_email: "a@b.example", cancel_token: "t" }))
      assert.notProperty(SponsorshipCreate.fields, "member_name")
      assert.notProperty(PlacementCreate.fields, "ctr")
      assert.includeMembers(Object.keys(BookingCreate.fields), ["booking_type_id", "booking_type_name"])
    }))

  it.effect("create inputs: every failing field is named, with its message", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* errorsOf(SponsorshipCreate, { status: "live", starts_on: "2027-02-30", kind: "ad", amount_cents: -1, member_id: "7" }), {
        status: ["The selected status is invalid (expected one of: pending, active, fulfilled, cancelled)."],
        starts_on: ["The starts on field must be a valid date (YYYY-MM-DD)."],
        kind: ["The selected kind is invalid (expected one of: tier, logo_wall)."],
        amount_cents: ["The amount cents field must be at least 0."],
        member_id: ["The member id field must be an integer."]
      })
      assert.deepStrictEqual(yield* errorsOf(PlacementCreate, { ad_kind: "video", ad_link_url: "javascript:alert(1)", clicks: 1.5 }), {
        ad_kind: ["The selected ad kind is invalid (expected one of: image, text)."],
        ad_link_url: ["The ad link url field must be an address starting with http:// or https://."],
        clicks: ["The clicks field must be an integer."]
      })
      assert.deepStrictEqual(yield* errorsOf(BookingCreate, { booking_type_name: " ", starts_at: "tomorrow", visitor_email: "nope" }), {
        booking_type_name: ["The booking type name field is required."],
        starts_at: ["The starts at field must be a date-time with its offset (2027-01-10T18:00:00Z)."],
        visitor_email: ["The visitor email field must be a valid email address."]
      })
      assert.deepStrictEqual(yield* errorsOf(SponsorshipCreate, "not an object"), { input: ["The input must be a JSON object."] })
    }))
})
