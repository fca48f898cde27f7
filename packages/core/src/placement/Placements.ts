/**
 * Placement use cases (docs/api.md "Placements"): the live ones with a creative are listed;
 * embedders (imports, demo data) make them with their counts and internal fields. No event
 * fires for them.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { InvalidInput } from "../shared/Errors.ts"
import { Transactor } from "../shared/Ports.ts"
import { decodeInput, requireOwn } from "../shared/Input.ts"
import type { ListQuery, Page } from "../Pagination.ts"
import { parseSort } from "../Sort.ts"
import { MemberRepo } from "../member/MemberRepo.ts"
import { utcToday } from "../sponsorship/Sponsorships.ts"
import { type Placement, PlacementCreate, PlacementResource, PlacementSortColumns } from "./Placement.ts"
import { PlacementRepo } from "./PlacementRepo.ts"

export type PlacementListQuery = ListQuery

const filled = (value: string | null | undefined) => value != null && value.trim() !== ""

export class Placements extends Context.Service<Placements, {
  readonly list: (tenantId: number, query: PlacementListQuery) => Effect.Effect<Page<Placement>>
  /**
   * Makes a placement, a sponsorship row of kind `ad` (not exposed over HTTP). `input` is checked
   * by `PlacementCreate`; `ad_kind` defaults to image when there is an image, else text; a member
   * named must be the tenant's.
   */
  readonly create: (tenantId: number, input: PlacementCreate) => Effect.Effect<Placement, InvalidInput>
}>()("chamber/Placements") {
  static readonly layer = Layer.effect(Placements, Effect.gen(function*() {
    const repo = yield* PlacementRepo
    const members = yield* MemberRepo
    const tx = yield* Transactor

    const list = Effect.fn("Placements.list")(function*(tenantId: number, query: PlacementListQuery) {
      return yield* repo.listLive(tenantId, utcToday(), parseSort(query.sort, PlacementSortColumns), query.page ?? 1, query.updated_since)
    })

    const create = Effect.fn("Placements.create")(function*(tenantId: number, raw: PlacementCreate) {
      const input = yield* decodeInput(PlacementCreate, raw)
      yield* requireOwn("member_id", input.member_id, (id) => members.find(tenantId, id))
      const ad_kind = input.ad_kind ?? (filled(input.ad_image_url) ? "image" : "text")
      // The insert and the read of the row it answers commit together: a create that fails did not happen.
      return yield* tx.withTransaction(repo.insert(tenantId, PlacementResource.defaults({ ...input, ad_kind })))
    })

    return Placements.of({ list, create })
  }))
}
