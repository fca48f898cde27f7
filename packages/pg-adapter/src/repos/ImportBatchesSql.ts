/**
 * An import's set-wise writes in SQL (core ImportBatches): the rows of a batch sent as one JSON
 * array, spread into the table's row type by `jsonb_populate_recordset` and inserted by one
 * statement, in the order given, each answered as the resource's reads answer it (`envelopeColumns`):
 * from the statement itself, or, for a resource read through a view of what the API shows
 * (`ShownSql.ts`), by one read of the view. Any refusal of the database is the batch's (`ImportBatchRefused`).
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import type * as SqlError from "effect/sql/SqlError"
import {
  BookingResource,
  ContactResource,
  DealResource,
  EventResource,
  type Fields,
  ImportBatches,
  ImportBatchRefused,
  type InvoiceState,
  InvoiceResource,
  MemberResource,
  PaymentResource,
  PlacementResource,
  RegistrationResource,
  type Resource,
  SponsorshipResource
} from "@chamber/core"
import { randomBytes } from "node:crypto"
import { envelopeColumns, IDENTIFIER, int8Array, resourceTable } from "./ResourceSql.ts"
import { unavailable } from "./DatabaseFailuresSql.ts"
import { ImportSlices } from "./HeldRows.ts"

/** Where a resource's rows are written, and read when it is read through a view. */
interface Stored<D extends Fields> {
  readonly table: string
  /** The view the resource is read through, as its repository reads it (`shownTable`). */
  readonly view?: string
  /** Attributes the view computes, no column of the table. */
  readonly derived?: ReadonlyArray<keyof D & string>
  /** Columns of the table that are no field of the resource, given in each row. */
  readonly internal?: ReadonlyArray<string>
}

/**
 * The database refused the batch (a constraint, a value): the importer writes its records one by
 * one, for each one's own refusal. A database that does not answer (DatabaseFailuresSql) refuses
 * nothing: that stops the import.
 */
const refusal = (error: SqlError.SqlError) =>
  unavailable(error) === undefined ? Effect.fail(new ImportBatchRefused({ reason: error.message })) : Effect.die(error)

export const ImportBatchesSql = Layer.effect(ImportBatches, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const sliced = yield* ImportSlices

  /**
   * Rows of `resource` (each its stored values, `defaults` giving every field, plus `internal`
   * columns) inserted into `table`: the columns are the resource's stored fields but the derived
   * ones, and the internal ones. JSON-kind fields are sent as JSON values, not text.
   */
  const insertMany = <D extends Fields>(resource: Resource<string, D>, stored: Stored<D>) => {
    const derived: ReadonlyArray<string> = stored.derived ?? []
    const names = [...resource.storedKeys.filter((key) => !derived.includes(key)), ...(stored.internal ?? [])]
    const bad = [stored.table, stored.view ?? stored.table, ...names].find((name) => !IDENTIFIER.test(name))
    if (bad !== undefined) throw new Error(`${resource.name}: ${JSON.stringify(bad)} is not a plain identifier`)
    const columns = envelopeColumns(resource, "t", sliced)
    const toOne = columns.at(0)
    const table = sql.literal(stored.table)
    const list = sql.literal(names.join(", "))
    const picked = sql.literal(names.map((name) => `r.${name}`).join(", "))
    const select = sql.literal(columns.select)
    const view = stored.view === undefined ? undefined : sql.literal(`${stored.view} t`)
    return (tenantId: number, rows: ReadonlyArray<object>) => {
      if (rows.length === 0) return Effect.succeed([])
      const insert = (returning: ReturnType<typeof sql.literal>) =>
        sql`
          INSERT INTO ${table} AS t (tenant_id, ${list})
          SELECT ${tenantId}, ${picked}
          FROM jsonb_populate_recordset(NULL::${table}, ${JSON.stringify(rows)}::jsonb) WITH ORDINALITY AS r
          ORDER BY r.ordinality
          RETURNING ${returning}`.values
      const written = view === undefined
        ? insert(select)
        : Effect.flatMap(insert(sql.literal("t.id")), (ids) =>
          sql`SELECT ${select} FROM ${view} WHERE t.tenant_id = ${tenantId} AND t.id = ANY(${int8Array(ids.map((v) => Number(v[0])))}::int8[])`.values)
      return written.pipe(
        Effect.catchTag("SqlError", refusal),
        // Each row answered, or none: a row the view does not show would pair the others with the wrong records.
        Effect.flatMap((values) =>
          values.length === rows.length
            ? Effect.succeed(values.map(toOne).sort((a, b) => a.id - b.id))
            : Effect.fail(new ImportBatchRefused({ reason: `${values.length} of ${rows.length} rows read back` }))
        )
      )
    }
  }

  const members = insertMany(MemberResource, { table: "members" })
  const contacts = insertMany(ContactResource, { table: "contacts", internal: ["subscribed_at", "member_id"] })
  const events = insertMany(EventResource, { table: "events" })
  const eventColumns = envelopeColumns(EventResource, "t")
  const invoices = insertMany(InvoiceResource, { table: "invoices", internal: ["pay_token"] })
  const invoiceColumns = envelopeColumns(InvoiceResource, "t")
  const invoiceStored = InvoiceResource.storedKeys
  const invoiceSet = sql.literal(`(${invoiceStored.join(", ")}) = (${invoiceStored.map((key) => `r.${key}`).join(", ")})`)
  const invoiceRows = resourceTable(sql, InvoiceResource, "invoices", "t", sliced)

  return ImportBatches.of({
    memberSlugs: (tenantId) =>
      sql<{ readonly slug: string }>`SELECT slug FROM members WHERE tenant_id = ${tenantId} AND slug IS NOT NULL`.pipe(
        Effect.map((rows) => new Set(rows.map((r) => r.slug))),
        Effect.orDie
      ),
    allOwned: (tenantId, table, ids) => {
      const distinct = [...new Set(ids)]
      return sql<{ readonly n: number }>`
        SELECT count(*)::int AS n FROM ${sql.literal(table)} WHERE tenant_id = ${tenantId} AND id = ANY(${int8Array(distinct)}::int8[])`.pipe(
        Effect.map(([row]) => row!.n === distinct.length),
        Effect.orDie
      )
    },
    insertMembers: members,
    insertContacts: (tenantId, rows) => {
      const now = new Date().toISOString()
      return contacts(tenantId, rows.map((row) => ({ ...row.values, subscribed_at: row.subscribed ? now : null, member_id: row.member_id })))
    },
    insertEvents: events,
    // One update, as EventRepo.update makes each (`updated_at` is the trigger's).
    endEvents: (tenantId, ends) =>
      ends.length === 0 ? Effect.succeed([]) : sql`
        UPDATE events AS t SET status = v.status
        FROM jsonb_to_recordset(${JSON.stringify(ends)}::jsonb) AS v(id int8, status text)
        WHERE t.tenant_id = ${tenantId} AND t.id = v.id
        RETURNING ${sql.literal(eventColumns.select)}`.values.pipe(
        Effect.catchTag("SqlError", refusal),
        Effect.flatMap((values) =>
          values.length === ends.length
            ? Effect.succeed(values.map(eventColumns.at(0)).sort((a, b) => a.id - b.id))
            : Effect.fail(new ImportBatchRefused({ reason: `${values.length} of ${ends.length} events ended` }))
        )
      ),
    insertRegistrations: insertMany(RegistrationResource, { table: "registrations" }),
    insertDeals: insertMany(DealResource, { table: "deals" }),
    insertSponsorships: insertMany(SponsorshipResource, { table: "sponsorships", view: "sponsorships_shown", derived: ["member_name"] }),
    insertPlacements: (() => {
      const placements = insertMany(PlacementResource, { table: "sponsorships", view: "placements_shown", derived: ["ctr"], internal: ["kind"] })
      return (tenantId, rows) => placements(tenantId, rows.map((row) => ({ ...row, kind: "ad" })))
    })(),
    // As InvoiceRepo.insert makes each: a random pay token, never shown; then every line, in order.
    insertInvoices: (tenantId, rows) =>
      Effect.gen(function*() {
        const written = yield* invoices(tenantId, rows.map((row) => ({ ...row.values, pay_token: randomBytes(24).toString("base64url") })))
        const lines = rows.flatMap((row, i) => row.lines.map((line, position) => ({ invoice_id: written[i]!.id, position, ...line })))
        if (lines.length > 0) {
          yield* sql`
            INSERT INTO invoice_lines (tenant_id, invoice_id, position, description, unit_cents, quantity)
            SELECT ${tenantId}, r.invoice_id, r.position, r.description, r.unit_cents, r.quantity
            FROM jsonb_populate_recordset(NULL::invoice_lines, ${JSON.stringify(lines)}::jsonb) WITH ORDINALITY AS r
            ORDER BY r.ordinality`.pipe(Effect.catchTag("SqlError", refusal))
        }
        return written
      }),
    // One update, as InvoiceRepo.update makes each (`updated_at` is the trigger's).
    updateInvoices: (tenantId, states) =>
      states.length === 0 ? Effect.succeed([]) : sql`
        UPDATE invoices AS t SET ${invoiceSet}
        FROM jsonb_populate_recordset(NULL::invoices, ${JSON.stringify(states)}::jsonb) AS r
        WHERE t.tenant_id = ${tenantId} AND t.id = r.id
        RETURNING ${sql.literal(invoiceColumns.select)}`.values.pipe(
        Effect.catchTag("SqlError", refusal),
        Effect.flatMap((values) => {
          const byId = new Map(values.map(invoiceColumns.at(0)).map((i) => [i.id, i]))
          const answered = states.flatMap((s) => byId.get(s.id) ?? [])
          return answered.length === states.length
            ? Effect.succeed(answered)
            : Effect.fail(new ImportBatchRefused({ reason: `${answered.length} of ${states.length} invoices updated` }))
        })
      ),
    lockInvoices: (tenantId, ids) =>
      Effect.map(invoiceRows.findAllForUpdate(tenantId, ids), (rows) => rows.map(({ shown, stored }) => ({ ...stored, id: shown.id }))),
    invoiceNumbersTaken: (tenantId, numbers) =>
      numbers.length === 0 ? Effect.succeed(new Set()) : sql<{ readonly number: string }>`
        SELECT number FROM invoices WHERE tenant_id = ${tenantId} AND number IN (SELECT jsonb_array_elements_text(${JSON.stringify(numbers)}::jsonb))`.pipe(
        Effect.map((rows) => new Set(rows.map((row) => row.number))),
        Effect.orDie
      ),
    invoiceSequence: (tenantId) =>
      sql<{ readonly last_number: bigint | string | number }>`SELECT last_number FROM invoice_sequences WHERE tenant_id = ${tenantId} FOR UPDATE`.pipe(
        Effect.map((rows) => (rows[0] === undefined ? undefined : Number(rows[0].last_number))),
        Effect.orDie
      ),
    setInvoiceSequence: (tenantId, last) =>
      sql`INSERT INTO invoice_sequences (tenant_id, last_number) VALUES (${tenantId}, ${last})
         ON CONFLICT (tenant_id) DO UPDATE SET last_number = greatest(invoice_sequences.last_number, excluded.last_number)`.pipe(Effect.asVoid, Effect.orDie),
    insertPayments: (() => {
      const payments = insertMany(PaymentResource, { table: "payments", internal: ["invoice_id"] })
      return (tenantId, rows) => payments(tenantId, rows.map((row) => ({ ...row.values, invoice_id: row.invoice_id })))
    })(),
    insertBookings: insertMany(BookingResource, { table: "bookings", view: "bookings_shown", derived: ["booking_type_name"] }),
    // As BookingRepo.bookingTypeNamed for each name: the missing ones made, in the order first named.
    bookingTypesNamed: (tenantId, names) =>
      Effect.gen(function*() {
        if (names.length === 0) return []
        const given = JSON.stringify(names)
        yield* sql`
          INSERT INTO booking_types (tenant_id, name)
          SELECT ${tenantId}, n.name FROM (
            SELECT name, min(ord) AS first FROM jsonb_array_elements_text(${given}::jsonb) WITH ORDINALITY AS n(name, ord) GROUP BY name
          ) n ORDER BY n.first
          ON CONFLICT (tenant_id, name) DO NOTHING`
        const found = yield* sql<{ readonly id: bigint | number; readonly name: string }>`
          SELECT id, name FROM booking_types WHERE tenant_id = ${tenantId} AND name IN (SELECT jsonb_array_elements_text(${given}::jsonb))`
        const ids = new Map(found.map((row) => [row.name, Number(row.id)]))
        return names.map((name) => ids.get(name)!)
      }).pipe(Effect.orDie)
  })
}))
