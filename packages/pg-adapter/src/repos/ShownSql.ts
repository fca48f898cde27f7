/**
 * A resource written to its table and read through a view of what the API shows (sponsorships,
 * placements and bookings, migration 0007): the view's columns are exactly the attributes, some
 * computed when read (`derived`: a referenced row's current name, a ratio), which are no column
 * of the table and are left out of writes. Every statement is scoped by tenant.
 */
import * as Effect from "effect/Effect"
import type * as SqlClient from "effect/sql/SqlClient"
import type { Fields, Resource } from "@chamber/core"
import { columnValues, resourceTable } from "./ResourceSql.ts"

export const shownTable = <D extends Fields>(
  sql: SqlClient.SqlClient,
  sliced: boolean,
  resource: Resource<string, D>,
  names: { readonly table: string; readonly view: string; readonly alias: string; readonly derived: ReadonlyArray<keyof D & string> }
) => {
  const shown = resourceTable(sql, resource, names.view, names.alias, sliced)
  return {
    find: shown.find,
    page: shown.page,
    /** `internal`: columns of the table that are no field of the resource (a placement's kind). */
    insert: (tenantId: number, values: Partial<Record<keyof D, unknown>>, internal: Record<string, unknown> = {}) => {
      const stored = { ...values }
      for (const key of names.derived) delete stored[key]
      return sql<{ readonly id: bigint }>`INSERT INTO ${sql.literal(names.table)} ${
        sql.insert({ tenant_id: tenantId, ...columnValues(resource, stored), ...internal })
      } RETURNING id`.pipe(
        Effect.orDie,
        Effect.flatMap((rows) => shown.find(tenantId, Number(rows[0]!.id))),
        Effect.map((one) => one!)
      )
    }
  }
}
