/**
 * Placements in SQL, every statement scoped by tenant: written to `sponsorships` as rows of kind
 * `ad`, read through the view `placements_shown` (those rows, with `ctr`; `ShownSql.ts`).
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import { PlacementRepo, PlacementResource, type PlacementSort } from "@chamber/core"
import { orderBy } from "./PageSql.ts"
import { shownTable } from "./ShownSql.ts"
import { liveOn } from "./SponsorshipRepoSql.ts"
import { ImportSlices } from "./HeldRows.ts"

/** Latest-starting first by default; rows without a start come last in either direction. */
const orderOf = (sort: PlacementSort | undefined) =>
  orderBy<PlacementSort["column"]>("p", { starts_on: "p.starts_on", created_at: "p.created_at" }, "starts_on", ["starts_on"])(
    sort ?? { column: "starts_on", descending: true }
  )

/** A creative: a headline, body or image that is not blank. */
const CREATIVE = "(btrim(p.ad_headline) <> '' OR btrim(p.ad_body) <> '' OR btrim(p.ad_image_url) <> '')"

export const PlacementRepoSql = Layer.effect(PlacementRepo, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const sliced = yield* ImportSlices
  const placements = shownTable(sql, sliced, PlacementResource, { table: "sponsorships", view: "placements_shown", alias: "p", derived: ["ctr"] })
  return PlacementRepo.of({
    listLive: (tenantId, today, sort, page, updatedSince) =>
      placements.page(sql`p.tenant_id = ${tenantId} AND ${liveOn(sql, "p", today)} AND ${sql.literal(CREATIVE)}`, orderOf(sort), page, updatedSince),
    insert: (tenantId, values) => placements.insert(tenantId, values, { kind: "ad" })
  })
}))
