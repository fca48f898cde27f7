/** Sponsorships handlers: the feed of SponsorshipsGroup as one call of the core service. */
import * as Effect from "effect/Effect"
import { Sponsorships } from "@chamber/core"
import * as Kit from "../server/Kit.ts"
import { group } from "../server/Group.ts"
import { SponsorshipList } from "./SponsorshipsGroup.ts"

export const SponsorshipsHandlers = group("sponsorships", Effect.fn(function*(handlers) {
  const sponsorships = yield* Sponsorships
  return handlers.handle("list", ({ query }) => Kit.page(SponsorshipList, query.page, (tenant, page) => sponsorships.list(tenant, { ...query, page })))
}))
