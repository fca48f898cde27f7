/**
 * Bookings and booking types in SQL, every statement scoped by tenant: bookings are written to
 * `bookings` and read through the view `bookings_shown` (the type's current name, no visitor
 * detail; `ShownSql.ts`).
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import { BookingRepo, BookingResource, type BookingSort } from "@chamber/core"
import { orderBy } from "./PageSql.ts"
import { shownTable } from "./ShownSql.ts"
import { andShownRow, ImportSlices } from "./HeldRows.ts"

/** Soonest first by default. */
const orderOf = (sort: BookingSort | undefined) =>
  orderBy<BookingSort["column"]>("b", { starts_at: "b.starts_at", created_at: "b.created_at" }, "starts_at")(sort)

export const BookingRepoSql = Layer.effect(BookingRepo, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const sliced = yield* ImportSlices
  const bookings = shownTable(sql, sliced, BookingResource, { table: "bookings", view: "bookings_shown", alias: "b", derived: ["booking_type_name"] })
  return BookingRepo.of({
    listUpcoming: (tenantId, now, sort, page, updatedSince) =>
      bookings.page(sql`b.tenant_id = ${tenantId} AND b.status = 'confirmed' AND b.starts_at >= ${now}::timestamptz`, orderOf(sort), page, updatedSince),
    insert: (tenantId, values) => bookings.insert(tenantId, values),
    hasBookingType: (tenantId, id) =>
      sql`SELECT 1 FROM booking_types t WHERE t.tenant_id = ${tenantId} AND t.id = ${id}${sql.literal(andShownRow(sliced, "t"))}`.pipe(
        Effect.map((rows) => rows.length > 0),
        Effect.orDie
      ),
    // ON CONFLICT waits for a concurrent maker of the same name; the SELECT then sees its row.
    bookingTypeNamed: (tenantId, name) =>
      Effect.gen(function*() {
        const made = yield* sql<{ readonly id: bigint }>`INSERT INTO booking_types (tenant_id, name) VALUES (${tenantId}, ${name})
          ON CONFLICT (tenant_id, name) DO NOTHING RETURNING id`
        if (made[0] !== undefined) return Number(made[0].id)
        const found = yield* sql<{ readonly id: bigint }>`SELECT id FROM booking_types WHERE tenant_id = ${tenantId} AND name = ${name}`
        return Number(found[0]!.id)
      }).pipe(Effect.orDie)
  })
}))
