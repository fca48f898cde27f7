/** Event registrations in SQL, every statement scoped by tenant; a page is `listPage`. */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import { RegistrationRepo, RegistrationResource } from "@chamber/core"
import { listPage, type Order, updatedAtOrder } from "./PageSql.ts"
import { columnValues, envelopeColumns, type ResourceRow, toEnvelope } from "./ResourceSql.ts"
import { andShownRow, ImportSlices } from "./HeldRows.ts"

type RegistrationRow = ResourceRow<typeof RegistrationResource.fields>

const REGISTRATION = envelopeColumns(RegistrationResource, "r")
const COLUMNS = REGISTRATION.select
const toRegistration = toEnvelope(RegistrationResource)
/** By registration time, those without one last; ties by id. */
const REGISTERED: Order = [
  { expression: "r.registered_at", descending: false, nullsLast: true },
  { expression: "r.id", descending: false, nullsLast: false }
]

export const RegistrationRepoSql = Layer.effect(RegistrationRepo, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const sliced = yield* ImportSlices
  return RegistrationRepo.of({
    listForEvent: (tenantId, eventId, sort, page, updatedSince) =>
      listPage(sql, {
        columns: REGISTRATION,
        from: "registrations r",
        alias: "r",
        where: sql`r.tenant_id = ${tenantId} AND r.event_id = ${eventId}${sql.literal(andShownRow(sliced, "r"))}`,
        order: sort === undefined ? REGISTERED : updatedAtOrder("r", sort),
        page,
        updatedSince
      }),
    insert: (tenantId, values) =>
      Effect.gen(function*() {
        const inserted = yield* sql<{ readonly id: bigint }>`INSERT INTO registrations ${
          sql.insert({ tenant_id: tenantId, ...columnValues(RegistrationResource, values) })
        } RETURNING id`
        const rows = yield* sql<RegistrationRow>`SELECT ${sql.literal(COLUMNS)} FROM registrations r
          WHERE r.tenant_id = ${tenantId} AND r.id = ${inserted[0]!.id}`
        return toRegistration(rows[0]!)
      }).pipe(Effect.orDie)
  })
}))
