/**
 * Sponsorship use cases (docs/api.md "Sponsorships"): the live ones are listed; embedders
 * (imports, demo data) make them with their internal fields. No event fires for them.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { InvalidInput } from "../shared/Errors.ts"
import { Transactor } from "../shared/Ports.ts"
import { decodeInput, requireOwn } from "../shared/Input.ts"
import type { ListQuery, Page } from "../Pagination.ts"
import { parseSort } from "../Sort.ts"
import { EventRepo } from "../event/EventRepo.ts"
import { MemberRepo } from "../member/MemberRepo.ts"
import { type Sponsorship, SponsorshipCreate, SponsorshipResource, SponsorshipSortColumns } from "./Sponsorship.ts"
import { SponsorshipRepo } from "./SponsorshipRepo.ts"

export type SponsorshipListQuery = ListQuery

/** Today's date in UTC, `YYYY-MM-DD`: the day the live rule of sponsorships and placements looks at. */
export const utcToday = (): string => new Date().toISOString().slice(0, 10)

export class Sponsorships extends Context.Service<Sponsorships, {
  readonly list: (tenantId: number, query: SponsorshipListQuery) => Effect.Effect<Page<Sponsorship>>
  /**
   * Makes a sponsorship (not exposed over HTTP). `input` is checked by `SponsorshipCreate`; its
   * `kind` defaults to tier; a member or event named must be the tenant's.
   */
  readonly create: (tenantId: number, input: SponsorshipCreate) => Effect.Effect<Sponsorship, InvalidInput>
}>()("chamber/Sponsorships") {
  static readonly layer = Layer.effect(Sponsorships, Effect.gen(function*() {
    const repo = yield* SponsorshipRepo
    const members = yield* MemberRepo
    const events = yield* EventRepo
    const tx = yield* Transactor

    const list = Effect.fn("Sponsorships.list")(function*(tenantId: number, query: SponsorshipListQuery) {
      return yield* repo.listLive(tenantId, utcToday(), parseSort(query.sort, SponsorshipSortColumns), query.page ?? 1, query.updated_since)
    })

    const create = Effect.fn("Sponsorships.create")(function*(tenantId: number, raw: SponsorshipCreate) {
      const input = yield* decodeInput(SponsorshipCreate, raw)
      yield* requireOwn("member_id", input.member_id, (id) => members.find(tenantId, id))
      yield* requireOwn("event_id", input.event_id, (id) => events.find(tenantId, id))
      // The insert and the read of the row it answers commit together: a create that fails did not happen.
      return yield* tx.withTransaction(repo.insert(tenantId, SponsorshipResource.defaults({ ...input, kind: input.kind ?? "tier" })))
    })

    return Sponsorships.of({ list, create })
  }))
}
