/** Deals handlers: each endpoint of DealsGroup as one call of the core service. */
import * as Effect from "effect/Effect"
import { Deals } from "@chamber/core"
import * as Kit from "../server/Kit.ts"
import { group } from "../server/Group.ts"
import { DealList, DealResponse } from "./DealsGroup.ts"

export const DealsHandlers = group("deals", Effect.fn(function*(handlers) {
  const deals = yield* Deals
  return handlers
    .handle("list", ({ query }) => Kit.page(DealList, query.page, (tenant, page) => deals.list(tenant, { ...query, page })))
    .handle("create", ({ payload }) => Kit.single(DealResponse, 201, (tenant) => deals.create(tenant, payload)))
    .handle("update", ({ params, payload }) => Kit.single(DealResponse, 200, (tenant) => deals.update(tenant, params.deal, payload)))
}))
