/**
 * Sponsorships (docs/api.md "Sponsorships"), the whole of the resource in core: its scope, the
 * one declaration of a sponsorship's fields, the storage port, and the service. Read through the
 * API (the live ones only), made by the core library (`Sponsorships.create`) with their internal
 * fields, each firing sponsorship.created in its transaction (ruling 34). Placements are the
 * sponsorship rows of kind `ad` and have their own declaration (`placement/Placements.ts`).
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { EventRepo } from "../event/EventRepo.ts"
import { MemberRepo } from "../member/MemberRepo.ts"
import type { ListQuery, Page } from "../Pagination.ts"
import * as F from "../resource/Field.ts"
import { defineResource } from "../resource/Resource.ts"
import { resourceScopes } from "../resource/ResourceScopes.ts"
import type { InvalidInput } from "../shared/Errors.ts"
import { decodeInput, requireOwn } from "../shared/Input.ts"
import { Transactor } from "../shared/Ports.ts"
import { Outbox } from "../outbox/Outbox.ts"
import { parseSort, sortColumns, type SortOrder } from "../Sort.ts"

export const SponsorshipScopes = resourceScopes("sponsorships", ["read"])

/** The statuses of sponsorships and placements alike. */
export const SponsorshipStatuses = ["pending", "active", "fulfilled", "cancelled"] as const
/** The kinds of sponsorship the sponsorships feed lists; `ad` rows are placements. */
export const SponsorshipKinds = ["tier", "logo_wall"] as const
export const SponsorshipSortColumns = sortColumns("starts_on", "created_at")

export const SponsorshipResource = defineResource("Sponsorship", {
  member_id: F.nullable(F.bigInteger(1, 12)),
  /** The member's current name, read with the row; null without a member. */
  member_name: F.readOnlyNullable(F.text(255, "Acme & Sons, LLC")),
  name: F.nullable(F.text(255, "Gold sponsor 2027")),
  status: F.defaulted(F.oneOf(SponsorshipStatuses, "active"), "pending"),
  starts_on: F.nullable(F.date("2027-01-01")),
  ends_on: F.nullable(F.date("2027-12-31")),
  sponsorship_package_id: F.nullable(F.bigInteger(1, 4)),
  tier: F.nullable(F.text(255, "Gold")),
  event_id: F.nullable(F.bigInteger(1, 3)),
  // Internal: taken by the core library and stored, never shown.
  kind: F.writeOnly(F.oneOf(SponsorshipKinds, "tier")),
  amount_cents: F.writeOnly(F.bigInteger(0, 250_000)),
  invoice_id: F.writeOnly(F.bigInteger(1, 41)),
  notes: F.writeOnly(F.text(2000, "Logo on the gala banner."))
})

export const Sponsorship = SponsorshipResource.Envelope
export type Sponsorship = typeof Sponsorship.Type
export type SponsorshipStored = ReturnType<typeof SponsorshipResource.defaults>
/** What `Sponsorships.create` takes: every attribute but `member_name`, and the internal fields. */
export const SponsorshipCreate = SponsorshipResource.Create
export type SponsorshipCreate = typeof SponsorshipCreate.Type

export type SponsorshipSort = SortOrder<(typeof SponsorshipSortColumns)[number]>

/** Storage port for sponsorships. Every method is scoped by tenant. */
export class SponsorshipRepo extends Context.Service<SponsorshipRepo, {
  /**
   * The sponsorships live on `today` (`YYYY-MM-DD`): of kind tier or logo_wall, active, and
   * `today` within [starts_on, ends_on], a null end open (docs/api.md "Sponsorships").
   * By default the latest-starting first (those without a start last).
   */
  readonly listLive: (tenantId: number, today: string, sort: SponsorshipSort | undefined, page: number, updatedSince?: string) => Effect.Effect<Page<Sponsorship>>
  readonly insert: (tenantId: number, values: SponsorshipStored) => Effect.Effect<Sponsorship>
}>()("chamber/SponsorshipRepo") {}

export type SponsorshipListQuery = ListQuery

/** Today's date in UTC, `YYYY-MM-DD`: the day the live rule of sponsorships and placements looks at. */
export const utcToday = (): string => new Date().toISOString().slice(0, 10)

/** The stored values of a new sponsorship (Sponsorships.create, an import's batches): of kind tier unless given. */
export const newSponsorship = (input: SponsorshipCreate): SponsorshipStored => SponsorshipResource.defaults({ ...input, kind: input.kind ?? "tier" })

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
    const outbox = yield* Outbox
    const tx = yield* Transactor

    const list = Effect.fn("Sponsorships.list")(function*(tenantId: number, query: SponsorshipListQuery) {
      return yield* repo.listLive(tenantId, utcToday(), parseSort(query.sort, SponsorshipSortColumns), query.page ?? 1, query.updated_since)
    })

    const create = Effect.fn("Sponsorships.create")(function*(tenantId: number, raw: SponsorshipCreate) {
      const input = yield* decodeInput(SponsorshipCreate, raw)
      yield* requireOwn("member_id", input.member_id, (id) => members.find(tenantId, id))
      yield* requireOwn("event_id", input.event_id, (id) => events.find(tenantId, id))
      // The insert, the read of the row it answers and its event commit together: a create that fails did not happen.
      return yield* tx.withTransaction(Effect.tap(
        repo.insert(tenantId, newSponsorship(input)),
        (sponsorship) => outbox.append(tenantId, "sponsorship.created", sponsorship)
      ))
    })

    return Sponsorships.of({ list, create })
  }))
}
