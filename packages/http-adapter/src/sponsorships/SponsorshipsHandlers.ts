/** Sponsorships handlers: the feed of SponsorshipsGroup as one call of the core service. */
import * as Effect from "effect/Effect"
import { Sponsorships } from "@chamber/core"
import * as Respond from "../server/Respond.ts"
import { groupHandlers } from "../shared/Served.ts"
import { SponsorshipList, SponsorshipsGroup } from "./SponsorshipsGroup.ts"

export default groupHandlers(SponsorshipsGroup, Effect.fn(function*(handlers) {
  const sponsorships = yield* Sponsorships
  return handlers.handle("list", ({ query }) => Respond.page(SponsorshipList, query.page, (tenant, page) => sponsorships.list(tenant, { ...query, page })))
}))
