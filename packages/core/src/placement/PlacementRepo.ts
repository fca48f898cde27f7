/** Storage port for placements (sponsorship rows of kind `ad`). Every method is scoped by tenant. */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { Page } from "../Pagination.ts"
import type { SortOrder } from "../Sort.ts"
import type { Placement, PlacementSortColumns, PlacementStored } from "./Placement.ts"

export type PlacementSort = SortOrder<(typeof PlacementSortColumns)[number]>

export class PlacementRepo extends Context.Service<PlacementRepo, {
  /**
   * The placements live on `today` (`YYYY-MM-DD`) that carry a creative: active, `today` within
   * [starts_on, ends_on] (a null end open), and a headline, body or image that is not blank
   * (docs/api.md "Placements"). By default the latest-starting first (those without a start last).
   */
  readonly listLive: (tenantId: number, today: string, sort: PlacementSort | undefined, page: number, updatedSince?: string) => Effect.Effect<Page<Placement>>
  /** Stores a row of kind `ad`. */
  readonly insert: (tenantId: number, values: PlacementStored) => Effect.Effect<Placement>
}>()("chamber/PlacementRepo") {}
