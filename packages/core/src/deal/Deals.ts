/**
 * Deal use cases (docs/api.md "Deals"): a deal awaits approval unless created approved; becoming
 * approved (at creation, or from pending or rejected) fires deal.approved in the same
 * transaction; its member is the chamber's; it ends after today. Creating one fires deal.created,
 * and each change of what it shows deal.updated, before deal.approved (ruling 34).
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Transactor } from "../shared/Ports.ts"
import { Outbox } from "../outbox/Outbox.ts"
import { changesShown } from "../outbox/Shown.ts"
import type { ListQuery, Page } from "../Pagination.ts"
import { parseSort } from "../Sort.ts"
import { slugify } from "../member/Member.ts"
import { MemberRepo } from "../member/MemberRepo.ts"
import { type Deal, type DealCreate, DealResource, DealSortColumns, type DealStored, type DealUpdate } from "./Deal.ts"
import { DealEndsTooSoon, DealNotFound } from "./DealErrors.ts"
import type { InvalidInput } from "../shared/Errors.ts"
import { requireOwn } from "../shared/Input.ts"
import { DealRepo } from "./DealRepo.ts"

export type DealListQuery = ListQuery

/** A deal ends after today (on a later calendar day, in UTC) or has no end; the import checks it before writing too. */
export const afterToday = (endsAt: string | null | undefined, now: Date) =>
  endsAt == null || endsAt.slice(0, 10) > now.toISOString().slice(0, 10)

/**
 * What only an import gives a deal it recreates (docs/cli.md "Import"): its slug as it was (made
 * from the title unless given), and its end whatever it is, an end already past included.
 */
export interface DealImported {
  readonly slug?: string | null | undefined
}

/** The stored values of a new deal (Deals.create, an import's batches): its slug from its title, or as imported. */
export const newDeal = (input: DealCreate, imported?: DealImported): DealStored =>
  DealResource.defaults({ ...input, slug: imported?.slug ?? slugify(input.title, "deal") })

export class Deals extends Context.Service<Deals, {
  readonly list: (tenantId: number, query: DealListQuery) => Effect.Effect<Page<Deal>>
  /** With `imported`, the deal an import brings: no rule on its end (it may have ended). */
  readonly create: (tenantId: number, input: DealCreate, imported?: DealImported) => Effect.Effect<Deal, InvalidInput | DealEndsTooSoon>
  readonly update: (tenantId: number, id: number, input: DealUpdate) => Effect.Effect<Deal, DealNotFound | InvalidInput | DealEndsTooSoon>
}>()("chamber/Deals") {
  static readonly layer = Layer.effect(Deals, Effect.gen(function*() {
    const repo = yield* DealRepo
    const members = yield* MemberRepo
    const outbox = yield* Outbox
    const tx = yield* Transactor

    const requireMember = (tenantId: number, memberId: number | undefined) => requireOwn("member_id", memberId, (id) => members.find(tenantId, id))

    const list = Effect.fn("Deals.list")(function*(tenantId: number, query: DealListQuery) {
      return yield* repo.list(tenantId, parseSort(query.sort, DealSortColumns), query.page ?? 1, query.updated_since)
    })

    const create = Effect.fn("Deals.create")(function*(tenantId: number, input: DealCreate, imported?: DealImported) {
      if (imported === undefined && !afterToday(input.ends_at, new Date())) return yield* new DealEndsTooSoon()
      yield* requireMember(tenantId, input.member_id)
      const values = newDeal(input, imported)
      return yield* tx.withTransaction(Effect.gen(function*() {
        const deal = yield* repo.insert(tenantId, values)
        yield* outbox.append(tenantId, "deal.created", deal)
        if (deal.attributes.status === "approved") yield* outbox.append(tenantId, "deal.approved", deal)
        return deal
      }))
    })

    const update = Effect.fn("Deals.update")(function*(tenantId: number, id: number, input: DealUpdate) {
      if (!afterToday(input.ends_at, new Date())) return yield* new DealEndsTooSoon()
      return yield* tx.withTransaction(Effect.gen(function*() {
        const current = yield* repo.findForUpdate(tenantId, id)
        if (current === undefined) return yield* new DealNotFound({ id })
        yield* requireMember(tenantId, input.member_id)
        const changes = DealResource.changes(current.stored, input)
        if (Object.keys(changes).length === 0) return current.shown
        const deal = yield* repo.update(tenantId, id, changes)
        if (changesShown(current.shown, deal)) yield* outbox.append(tenantId, "deal.updated", deal)
        if (changes.status === "approved") yield* outbox.append(tenantId, "deal.approved", deal)
        return deal
      }))
    })

    return Deals.of({ list, create, update })
  }))
}
