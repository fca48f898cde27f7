/** Placements handlers: the feed of PlacementsGroup as one call of the core service. */
import * as Effect from "effect/Effect"
import { Placements } from "@chamber/core"
import * as Kit from "../server/Kit.ts"
import { group } from "../server/Group.ts"
import { PlacementList } from "./PlacementsGroup.ts"

export const PlacementsHandlers = group("placements", Effect.fn(function*(handlers) {
  const placements = yield* Placements
  return handlers.handle("list", ({ query }) => Kit.page(PlacementList, query.page, (tenant, page) => placements.list(tenant, { ...query, page })))
}))
