/** Deals handlers: each endpoint of DealsGroup as one call of the core service. */
import * as Effect from "effect/Effect"
import { Deals } from "@chamber/core"
import * as Respond from "../server/Respond.ts"
import { groupHandlers } from "../shared/Served.ts"
import { DealList, DealResponse, DealsGroup } from "./DealsGroup.ts"

export default groupHandlers(DealsGroup, Effect.fn(function*(handlers) {
  const deals = yield* Deals
  return handlers
    .handle("list", ({ query }) => Respond.page(DealList, query.page, (tenant, page) => deals.list(tenant, { ...query, page })))
    .handle("create", ({ payload }) => Respond.single(DealResponse, 201, (tenant) => deals.create(tenant, payload)))
    .handle("update", ({ params, payload }) => Respond.single(DealResponse, 200, (tenant) => deals.update(tenant, params.deal, payload)))
}))
