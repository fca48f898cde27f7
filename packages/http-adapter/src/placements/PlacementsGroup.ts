/** The advertising placements feed (docs/api.md "Placements"): the contract only. */
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import { PlacementResource, PlacementSortColumns } from "@chamber/core"
import { Authentication, Idempotent } from "../shared/Access.ts"
import { listEndpoint } from "../shared/Endpoints.ts"

export const PlacementList = PlacementResource.List

export class PlacementsGroup extends HttpApiGroup.make("placements")
  .add(
    listEndpoint("/", PlacementList, {
      access: "placements:read",
      sort: PlacementSortColumns,
      summary: "List live placements",
      description:
        "Only live ad placements that carry a creative, as on the public placements feed: status active, today (UTC) within " +
        "`starts_on`..`ends_on` (a missing date is open), and a headline, body or image. With aggregate `impressions` and " +
        "`clicks`, and `ctr` = clicks / impressions as a fraction (0 without impressions). 100 a page. `sort`: starts_on, " +
        "-starts_on, created_at, -created_at, updated_at or -updated_at (default: current first, the latest-starting first, those without a start " +
        "last); anything else means the default."
    })
  )
  .middleware(Idempotent).middleware(Authentication)
  .prefix("/api/v1/placements")
  .annotateMerge(OpenApi.annotations({ description: "Advertising placements (read only): the chamber's live ads." })) {}
