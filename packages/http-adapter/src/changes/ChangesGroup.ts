/** The change feed (docs/api.md "Change feed", ruling 29): the contract only. */
import * as Schema from "effect/Schema"
import * as SchemaTransformation from "effect/SchemaTransformation"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import { CURSOR_PATTERN, EventKinds, KIND_SCOPES } from "@chamber/core"
import { Authentication, Idempotent } from "../shared/Access.ts"
import { Forbidden, Gone, ValidationError } from "../shared/HttpErrors.ts"
import { operation } from "../shared/Operation.ts"

export const ChangeEvent = Schema.Struct({
  id: Schema.String,
  type: Schema.Literals(EventKinds),
  created_at: Schema.String,
  data: Schema.Unknown
}).annotate({ identifier: "ChangeEvent", description: "An event exactly as a webhook delivery's body carries it." })

export const ChangesPage = Schema.Struct({
  data: Schema.Array(ChangeEvent),
  meta: Schema.Struct({ next_cursor: Schema.String, has_more: Schema.Boolean })
}).annotate({
  identifier: "ChangesPage",
  examples: [{
    data: [{
      id: "evt_01JD8ZQ4W6K2B3N5P7R9T1V3X5",
      type: "member.created",
      created_at: "2026-11-22T15:04:05.123Z",
      data: { id: 42, type: "member", attributes: { name: "Acme Plumbing", status: "active" } }
    }],
    meta: { next_cursor: "djIuMTA0Mg", has_more: false }
  }]
})

/** `types`: comma-separated kinds; repeated, the repeats are joined. */
const TypesQuery = Schema.optionalKey(
  Schema.Union([Schema.String, Schema.Array(Schema.String)]).pipe(
    Schema.decodeTo(Schema.String, SchemaTransformation.transform({ decode: (v) => (typeof v === "string" ? v : v.join(",")), encode: (s) => s }))
  ).annotate({ description: `Comma-separated event kinds: ${EventKinds.join(", ")}. Without it, every kind the key may read.` })
)

const readScopes = [...new Set(Object.values(KIND_SCOPES))] as [typeof KIND_SCOPES[keyof typeof KIND_SCOPES], ...Array<typeof KIND_SCOPES[keyof typeof KIND_SCOPES]>]

export class ChangesGroup extends HttpApiGroup.make("changes")
  .add(
    HttpApiEndpoint.get("changes", "/api/v1/changes", {
      query: {
        after: Schema.optionalKey(Schema.String.annotate({
          description: "`head` (start from now), or the `next_cursor` of an earlier answer. Without it: from the oldest event kept."
        })),
        types: TypesQuery
      },
      success: ChangesPage,
      error: [ValidationError, Forbidden, Gone]
    }).pipe(operation({
      access: { anyOf: readScopes },
      query: {
        // Stated as the decoder reads it: one value of kinds joined by commas (repeats are joined too).
        types: {
          description: "Event kinds, comma-separated (`types=member.created,invoice.paid`). Without it, every kind the key may read.",
          style: "form",
          explode: false,
          schema: { type: "array", items: { type: "string", enum: EventKinds } }
        },
        after: {
          description: "`head` (start from now), or the `next_cursor` of an earlier answer (base64url, opaque). Without it: from the " +
            "oldest event kept. A cursor past the newest event of the chamber is a 422 on `after`.",
          schema: { type: "string", pattern: CURSOR_PATTERN, maxLength: 30 }
        }
      },
      summary: "Read the change feed",
      description:
        "Every event the chamber fired, in commit order, at most 100 an answer, oldest first, each exactly as a webhook " +
        "delivery carries it. Follow `meta.next_cursor` (always present) as `after`; `has_more` says whether more wait now, " +
        "and polling the cursor later answers newer events. A reader that follows the cursor sees every event once: an " +
        "event appears only when no earlier one can still appear. A cursor is the chamber's own: it tells nothing of other " +
        "chambers' activity. `after=head` answers no events and the cursor of the " +
        "newest, to start from now. Each kind is answered only to its resource's read scope (member.* `members:read`, " +
        "contact.* `contacts:read`, event.created and event.updated `events:read`, event.registration.created " +
        "`registrations:read`, invoice.* `invoices:read`, payment.created `payments:read`, deal.* `deals:read`, " +
        "sponsorship.created `sponsorships:read`, placement.created `placements:read`, booking.created `bookings:read`); `types` naming a kind the key may not read is a 403 naming its scope. An unknown " +
        "kind is a 422 on `types`; a malformed cursor, or one past the newest position the chamber's feed has given " +
        "(a cursor of another database, or saved before a restore), a 422 on `after`. Events are kept 90 days by default: a cursor older " +
        "than the oldest kept is a 410 (resync from the lists, then start again with `after=head`)."
    }))
  )
  .middleware(Idempotent).middleware(Authentication)
  .annotateMerge(OpenApi.annotations({ description: "The change feed: every event of the chamber, in commit order." })) {}
