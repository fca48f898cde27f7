/**
 * Advertising placements (docs/api.md "Placements"), the whole of the resource in core: the one
 * declaration of a placement's fields and its scope, the storage port, and the service. A
 * placement is a sponsorship row of kind `ad`; read through the API (the live ones with a
 * creative only), made by the core library (`Placements.create`), each firing placement.created in
 * its transaction (ruling 34).
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
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
import { SponsorshipStatuses, utcToday } from "../sponsorship/Sponsorships.ts"

export const PlacementScopes = resourceScopes("placements", ["read"])

export const AdKinds = ["image", "text"] as const
export const PlacementSortColumns = sortColumns("starts_on", "created_at")

const HTTP = /^https?:\/\//i
const httpAddress = (example: string) => F.patterned(2048, HTTP, "an address starting with http:// or https://", example, F.HTTP_ADDRESS)

export const PlacementResource = defineResource("Placement", {
  member_id: F.nullable(F.bigInteger(1, 12)),
  ad_slot: F.nullable(F.text(255, "homepage_sidebar")),
  ad_kind: F.defaulted(F.oneOf(AdKinds, "image"), "text"),
  ad_headline: F.nullable(F.text(255, "Spring tune-up special")),
  ad_body: F.nullable(F.text(2000, "20% off every tune-up in April.")),
  ad_cta_label: F.nullable(F.text(255, "Book now")),
  ad_link_url: F.nullable(httpAddress("https://acme.example/spring")),
  ad_image_url: F.nullable(httpAddress("https://cdn.acme.example/spring.png")),
  is_house_ad: F.defaulted(F.boolean(false), false),
  is_included_benefit: F.defaulted(F.boolean(true), false),
  starts_on: F.nullable(F.date("2027-04-01")),
  ends_on: F.nullable(F.date("2027-04-30")),
  status: F.defaulted(F.oneOf(SponsorshipStatuses, "active"), "pending"),
  impressions: F.defaulted(F.bigInteger(0, 12_400), 0),
  clicks: F.defaulted(F.bigInteger(0, 310), 0),
  /** clicks / impressions, a fraction (not a percentage); 0 without impressions. */
  ctr: F.readOnly(F.decimal(0.025)),
  // Internal: taken by the core library and stored, never shown.
  amount_cents: F.writeOnly(F.bigInteger(0, 15_000)),
  invoice_id: F.writeOnly(F.bigInteger(1, 42)),
  notes: F.writeOnly(F.text(2000, "Paid by card at the expo."))
})

export const Placement = PlacementResource.Envelope
export type Placement = typeof Placement.Type
export type PlacementStored = ReturnType<typeof PlacementResource.defaults>
/** What `Placements.create` takes: every attribute but `ctr`, and the internal fields. */
export const PlacementCreate = PlacementResource.Create
export type PlacementCreate = typeof PlacementCreate.Type

export type PlacementSort = SortOrder<(typeof PlacementSortColumns)[number]>

/** The storage port (sponsorship rows of kind `ad`). Every method is scoped by tenant. */
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

export type PlacementListQuery = ListQuery

const filled = (value: string | null | undefined) => value != null && value.trim() !== ""

/** The stored values of a new placement (Placements.create, an import's batches): an image ad when it has an image, else text, unless given. */
export const newPlacement = (input: PlacementCreate): PlacementStored =>
  PlacementResource.defaults({ ...input, ad_kind: input.ad_kind ?? (filled(input.ad_image_url) ? "image" : "text") })

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
    const outbox = yield* Outbox
    const tx = yield* Transactor

    const list = Effect.fn("Placements.list")(function*(tenantId: number, query: PlacementListQuery) {
      return yield* repo.listLive(tenantId, utcToday(), parseSort(query.sort, PlacementSortColumns), query.page ?? 1, query.updated_since)
    })

    const create = Effect.fn("Placements.create")(function*(tenantId: number, raw: PlacementCreate) {
      const input = yield* decodeInput(PlacementCreate, raw)
      yield* requireOwn("member_id", input.member_id, (id) => members.find(tenantId, id))
      // The insert, the read of the row it answers and its event commit together: a create that fails did not happen.
      return yield* tx.withTransaction(Effect.tap(
        repo.insert(tenantId, newPlacement(input)),
        (placement) => outbox.append(tenantId, "placement.created", placement)
      ))
    })

    return Placements.of({ list, create })
  }))
}
