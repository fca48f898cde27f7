/** Placements handlers: the feed of PlacementsGroup as one call of the core service. */
import * as Effect from "effect/Effect"
import { Placements } from "@chamber/core"
import * as Respond from "../server/Respond.ts"
import { groupHandlers } from "../shared/Served.ts"
import { PlacementList, PlacementsGroup } from "./PlacementsGroup.ts"

export default groupHandlers(PlacementsGroup, Effect.fn(function*(handlers) {
  const placements = yield* Placements
  return handlers.handle("list", ({ query }) => Respond.page(PlacementList, query.page, (tenant, page) => placements.list(tenant, { ...query, page })))
}))
