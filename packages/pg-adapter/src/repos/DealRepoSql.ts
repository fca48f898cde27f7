/** Deals in SQL, every statement scoped by tenant (`resourceTable`). */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import { DealRepo, DealResource, type DealSort } from "@chamber/core"
import { orderBy } from "./PageSql.ts"
import { resourceTable } from "./ResourceSql.ts"
import { ImportSlices } from "./HeldRows.ts"

/** Newest first by default. */
const orderOf = (sort: DealSort | undefined) =>
  orderBy<DealSort["column"]>("d", { created_at: "d.created_at" }, "created_at")(sort ?? { column: "created_at", descending: true })

export const DealRepoSql = Layer.effect(DealRepo, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const sliced = yield* ImportSlices
  const deals = resourceTable(sql, DealResource, "deals", "d", sliced)
  return DealRepo.of({ ...deals, list: (tenantId, sort, page, updatedSince) => deals.page(sql`d.tenant_id = ${tenantId}`, orderOf(sort), page, updatedSince) })
}))
