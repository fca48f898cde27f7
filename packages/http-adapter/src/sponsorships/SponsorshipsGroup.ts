/** The sponsorships feed (docs/api.md "Sponsorships"): the contract only. */
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import { SponsorshipResource, SponsorshipSortColumns } from "@chamber/core"
import { Authentication, Idempotent } from "../shared/Access.ts"
import { listEndpoint } from "../shared/Endpoints.ts"

export const SponsorshipList = SponsorshipResource.List

export class SponsorshipsGroup extends HttpApiGroup.make("sponsorships")
  .add(
    listEndpoint("/", SponsorshipList, {
      access: "sponsorships:read",
      sort: SponsorshipSortColumns,
      summary: "List live sponsorships",
      description:
        "Only live tier and logo-wall sponsorships, as on the public sponsors feed: status active and today (UTC) within " +
        "`starts_on`..`ends_on` (a missing date is open). Advertising placements are listed by /api/v1/placements. " +
        "100 a page. `sort`: starts_on, -starts_on, created_at, -created_at, updated_at or -updated_at (default: current first, the latest-starting " +
        "first, those without a start last); anything else means the default. `member_name` is the member's current name."
    })
  )
  .middleware(Idempotent).middleware(Authentication)
  .prefix("/api/v1/sponsorships")
  .annotateMerge(OpenApi.annotations({ description: "Sponsorships (read only): the chamber's live sponsors." })) {}
