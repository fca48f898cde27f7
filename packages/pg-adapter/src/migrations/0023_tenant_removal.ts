/**
 * Removing a chamber (docs/operations.md "Offboarding a chamber", pg-adapter
 * repos/TenantRemovalSql.ts): `deleting_at` marks a chamber whose removal has begun, so a second
 * run resumes it and `chamber tenant list` shows it. The removal empties each table in small
 * batches found by `tenant_id`, and each batch of parents makes PostgreSQL look for rows that still
 * reference them; the indexes below keep both lookups to the chamber's own rows instead of a read
 * of every chamber's (pg-adapter test/tenant-removal.test.ts checks every table and foreign key).
 */
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"

/** [table, column]: a chamber's rows found by `tenant_id`, or a parent's referencing rows by the column. */
const LOOKUPS = [
  ["invoice_lines", "tenant_id"],
  ["webhook_attempts", "tenant_id"],
  ["contacts", "member_id"],
  ["registrations", "member_id"],
  ["registrations", "contact_id"],
  ["registrations", "event_id"],
  ["deals", "member_id"],
  ["invoices", "member_id"],
  ["payments", "member_id"],
  ["payments", "invoice_id"],
  ["sponsorships", "member_id"],
  ["sponsorships", "event_id"],
  ["bookings", "member_id"],
  ["bookings", "contact_id"],
  ["bookings", "booking_type_id"],
  ["api_keys", "created_by"],
  ["idempotency_keys", "api_key_id"]
] as const

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE tenants ADD COLUMN deleting_at timestamptz`
  for (const [table, column] of LOOKUPS) {
    // A reference index holds only the rows that have one (what a parent's lookup can find).
    const partial = column === "tenant_id" ? "" : ` WHERE ${column} IS NOT NULL`
    yield* sql.unsafe(`CREATE INDEX ${table}_${column.replace(/_id$/, "")}_lookup ON ${table} (${column})${partial}`)
  }
})
