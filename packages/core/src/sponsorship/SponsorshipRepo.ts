/** Storage port for sponsorships. Every method is scoped by tenant. */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { Page } from "../Pagination.ts"
import type { SortOrder } from "../Sort.ts"
import type { Sponsorship, SponsorshipSortColumns, SponsorshipStored } from "./Sponsorship.ts"

export type SponsorshipSort = SortOrder<(typeof SponsorshipSortColumns)[number]>

export class SponsorshipRepo extends Context.Service<SponsorshipRepo, {
  /**
   * The sponsorships live on `today` (`YYYY-MM-DD`): of kind tier or logo_wall, active, and
   * `today` within [starts_on, ends_on], a null end open (docs/api.md "Sponsorships").
   * By default the latest-starting first (those without a start last).
   */
  readonly listLive: (tenantId: number, today: string, sort: SponsorshipSort | undefined, page: number, updatedSince?: string) => Effect.Effect<Page<Sponsorship>>
  readonly insert: (tenantId: number, values: SponsorshipStored) => Effect.Effect<Sponsorship>
}>()("chamber/SponsorshipRepo") {}
