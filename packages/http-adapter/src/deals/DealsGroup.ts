/** The Hot Deals endpoints (docs/api.md "Deals"): the contract only. */
import * as Schema from "effect/Schema"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import { Deal, DealCreate, DealResource, DealSortColumns, DealUpdate } from "@chamber/core"
import { Authentication, Idempotent } from "../shared/Access.ts"
import { createEndpoint, listEndpoint, updateEndpoint } from "../shared/Endpoints.ts"
import { single } from "../shared/Responses.ts"

export const DealResponse = single(Deal)
export const DealList = DealResource.List

const rules =
  "`member_id` must be one of the chamber's members; `ends_at` must be after today; `cta_url` starts with http:// or https://. " +
  "A new deal fires `deal.created`, a change of what it shows `deal.updated`; becoming approved (created approved, or moved " +
  "from pending or rejected) fires `deal.approved` after it."

export class DealsGroup extends HttpApiGroup.make("deals")
  .add(
    listEndpoint("/", DealList, {
      access: "deals:read",
      sort: DealSortColumns,
      summary: "List deals",
      description: "100 a page. `sort`: created_at, -created_at, updated_at or -updated_at (default: newest first); anything else means the default."
    }),
    createEndpoint("/", DealCreate, DealResponse, {
      access: "deals:write",
      summary: "Create a deal",
      description: `\`member_id\` and \`title\` are required; \`status\` defaults to pending (awaiting approval), \`audience\` to public. ${rules}`
    }),
    updateEndpoint("/:deal", "deal", DealUpdate, DealResponse, {
      access: "deals:write",
      summary: "Update a deal",
      description: `Only the fields sent change. ${rules}`
    })
  )
  .middleware(Idempotent).middleware(Authentication)
  .prefix("/api/v1/deals")
  .annotateMerge(OpenApi.annotations({ description: "Hot Deals: members' offers, approved by the chamber." })) {}
