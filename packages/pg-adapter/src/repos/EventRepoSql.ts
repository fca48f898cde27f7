/** Events in SQL, every statement scoped by tenant (`resourceTable`). */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import { EventRepo, EventResource, type EventSort } from "@chamber/core"
import { orderBy } from "./PageSql.ts"
import { resourceTable } from "./ResourceSql.ts"
import { ImportSlices } from "./HeldRows.ts"

/** Newest-starting first by default. */
const orderOf = (sort: EventSort | undefined) =>
  orderBy<EventSort["column"]>("e", { starts_at: "e.starts_at", created_at: "e.created_at" }, "starts_at")(sort ?? { column: "starts_at", descending: true })

export const EventRepoSql = Layer.effect(EventRepo, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const sliced = yield* ImportSlices
  const events = resourceTable(sql, EventResource, "events", "e", sliced)
  return EventRepo.of({ ...events, list: (tenantId, sort, page, updatedSince) => events.page(sql`e.tenant_id = ${tenantId}`, orderOf(sort), page, updatedSince) })
}))
