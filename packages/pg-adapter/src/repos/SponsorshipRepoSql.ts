/**
 * Sponsorships in SQL, every statement scoped by tenant: written to `sponsorships`, read through
 * the view `sponsorships_shown` (tier and logo_wall rows, the member's current name; `ShownSql.ts`).
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import { SponsorshipRepo, SponsorshipResource, type SponsorshipSort } from "@chamber/core"
import { orderBy } from "./PageSql.ts"
import { shownTable } from "./ShownSql.ts"
import { ImportSlices } from "./HeldRows.ts"

/**
 * Live on `today` (docs/api.md "Sponsorships"): active, and `today` within [starts_on, ends_on],
 * a null bound open. Placements share it.
 */
export const liveOn = (sql: SqlClient.SqlClient, alias: string, today: string) => {
  const a = sql.literal(alias)
  return sql`${a}.status = 'active'
    AND (${a}.starts_on IS NULL OR ${a}.starts_on <= ${today}::date)
    AND (${a}.ends_on IS NULL OR ${a}.ends_on >= ${today}::date)`
}

/** Latest-starting first by default; rows without a start come last in either direction. */
const orderOf = (sort: SponsorshipSort | undefined) =>
  orderBy<SponsorshipSort["column"]>("s", { starts_on: "s.starts_on", created_at: "s.created_at" }, "starts_on", ["starts_on"])(
    sort ?? { column: "starts_on", descending: true }
  )

export const SponsorshipRepoSql = Layer.effect(SponsorshipRepo, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const sliced = yield* ImportSlices
  const sponsorships = shownTable(sql, sliced, SponsorshipResource, {
    table: "sponsorships",
    view: "sponsorships_shown",
    alias: "s",
    derived: ["member_name"]
  })
  return SponsorshipRepo.of({
    listLive: (tenantId, today, sort, page, updatedSince) =>
      sponsorships.page(sql`s.tenant_id = ${tenantId} AND ${liveOn(sql, "s", today)}`, orderOf(sort), page, updatedSince),
    insert: (tenantId, values) => sponsorships.insert(tenantId, values)
  })
}))
