/** Deals handlers: each endpoint of DealsGroup as one call of the core service. */
import * as Effect from "effect/Effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { Deals } from "@chamber/core"
import { Api } from "../Api.ts"
import * as Respond from "../server/Respond.ts"
import { DealList, DealResponse } from "./DealsGroup.ts"

export const DealsHandlers = HttpApiBuilder.group(Api, "deals", Effect.fn(function*(handlers) {
  const deals = yield* Deals
  return handlers
    .handle("list", ({ query }) => Respond.page(DealList, query.page, (tenant, page) => deals.list(tenant, { ...query, page })))
    .handle("create", ({ payload }) => Respond.single(DealResponse, 201, (tenant) => deals.create(tenant, payload)))
    .handle("update", ({ params, payload }) => Respond.single(DealResponse, 200, (tenant) => deals.update(tenant, params.deal, payload)))
}))
