/** Placements handlers: the feed of PlacementsGroup as one call of the core service. */
import * as Effect from "effect/Effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { Placements } from "@chamber/core"
import { Api } from "../Api.ts"
import * as Respond from "../server/Respond.ts"
import { PlacementList } from "./PlacementsGroup.ts"

export const PlacementsHandlers = HttpApiBuilder.group(Api, "placements", Effect.fn(function*(handlers) {
  const placements = yield* Placements
  return handlers.handle("list", ({ query }) => Respond.page(PlacementList, query.page, (tenant, page) => placements.list(tenant, { ...query, page })))
}))
