/** Sponsorships handlers: the feed of SponsorshipsGroup as one call of the core service. */
import * as Effect from "effect/Effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { Sponsorships } from "@chamber/core"
import { Api } from "../Api.ts"
import * as Respond from "../server/Respond.ts"
import { SponsorshipList } from "./SponsorshipsGroup.ts"

export const SponsorshipsHandlers = HttpApiBuilder.group(Api, "sponsorships", Effect.fn(function*(handlers) {
  const sponsorships = yield* Sponsorships
  return handlers.handle("list", ({ query }) => Respond.page(SponsorshipList, query.page, (tenant, page) => sponsorships.list(tenant, { ...query, page })))
}))
