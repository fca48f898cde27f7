/**
 * A chamber's rows for `chamber export` (core ExportRepo), read by id in pages (keyset: each page
 * starts after the last id of the one before, so a page costs the same at any depth when the
 * planner's statistics know the chamber's size; on a table never analyzed, as the embedded
 * database's are, the planner may read and sort the rest of the chamber's rows for each page).
 * A row holds every stored field of its resource, read from its table (not the API's views,
 * which leave the internal fields out), custom fields whole; every statement is scoped by tenant.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import {
  BookingResource,
  ContactResource,
  DealResource,
  EventResource,
  ExportRepo,
  type Fields,
  InvoiceResource,
  MemberResource,
  PaymentResource,
  PlacementResource,
  RegistrationResource,
  type Resource,
  SponsorshipResource,
  type StoredCollection,
  type StoredRow
} from "@chamber/core"
import { isoColumn } from "./IsoColumn.ts"
import type { Int8 } from "./rows.ts"
import { andShownRow, ImportSlices } from "./HeldRows.ts"

interface Source {
  readonly table: string
  /** The select list over the table as `x`. */
  readonly select: string
  /** What picks the collection's rows out of a table it shares (sponsorships and placements). */
  readonly where: string
}

/**
 * The select list of every stored field of `resource` over `x`, as the repositories read them
 * (dates as text, times as the API shows them, int8 as numbers). `derived` names fields that are
 * no column of the table: each the expression that reads it, or null to leave it out.
 */
const source = <D extends Fields>(
  resource: Resource<string, D>,
  table: string,
  options: { readonly where?: string; readonly derived?: Readonly<Record<string, string | null>>; readonly columns?: Readonly<Record<string, string>> } = {}
): Source => {
  const derived = options.derived ?? {}
  const fields = resource.storedKeys.flatMap((key) => {
    if (key in derived) return derived[key] === null ? [] : [`${derived[key]} AS ${key}`]
    const column = resource.fields[key]!.kind.column
    if (column === "date") return [`x.${key}::text AS ${key}`]
    if (column === "timestamp") return [`${isoColumn(`x.${key}`)} AS ${key}`]
    if (column === "int8") return [`x.${key}::float8 AS ${key}`]
    return [`x.${key}`]
  })
  const columns = Object.entries(options.columns ?? {}).map(([key, expression]) => `${expression} AS ${key}`)
  return { table, select: ["x.id::float8 AS id", ...fields, ...columns].join(", "), where: options.where === undefined ? "" : ` AND ${options.where}` }
}

const SOURCES: Readonly<Record<StoredCollection, Source>> = {
  members: source(MemberResource, "members"),
  // A contact's member and whether it is subscribed, and a payment's invoice, are columns of their own, not fields of the resource.
  contacts: source(ContactResource, "contacts", { columns: { member_id: "x.member_id::float8", subscribed: "x.subscribed_at IS NOT NULL" } }),
  events: source(EventResource, "events"),
  registrations: source(RegistrationResource, "registrations"),
  deals: source(DealResource, "deals"),
  invoices: source(InvoiceResource, "invoices"),
  payments: source(PaymentResource, "payments", { columns: { invoice_id: "x.invoice_id::float8" } }),
  sponsorships: source(SponsorshipResource, "sponsorships", { where: "x.kind IN ('tier', 'logo_wall')", derived: { member_name: null } }),
  placements: source(PlacementResource, "sponsorships", { where: "x.kind = 'ad'", derived: { ctr: null } }),
  bookings: source(BookingResource, "bookings", {
    derived: { booking_type_name: "(SELECT t.name FROM booking_types t WHERE t.tenant_id = x.tenant_id AND t.id = x.booking_type_id)" }
  })
}

interface LineRow {
  readonly invoice_id: Int8
  readonly description: string
  readonly unit_cents: Int8
  readonly quantity: Int8
}

export const ExportRepoSql = Layer.effect(ExportRepo, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const sliced = yield* ImportSlices

  /** The lines of the page's invoices, in order, set on each as `lines`. */
  const withLines = (tenantId: number, invoices: ReadonlyArray<StoredRow>) =>
    Effect.gen(function*() {
      if (invoices.length === 0) return invoices
      const ids = invoices.map((i) => i.id)
      const rows = yield* sql<LineRow>`SELECT invoice_id, description, unit_cents, quantity FROM invoice_lines
        WHERE tenant_id = ${tenantId} AND invoice_id IN ${sql.in(ids)} ORDER BY invoice_id, position`
      const lines = new Map<number, Array<{ description: string; unit_cents: number; quantity: number }>>()
      for (const r of rows) {
        const of = lines.get(Number(r.invoice_id)) ?? []
        of.push({ description: r.description, unit_cents: Number(r.unit_cents), quantity: Number(r.quantity) })
        lines.set(Number(r.invoice_id), of)
      }
      return invoices.map((i) => ({ ...i, lines: lines.get(i.id) ?? [] }))
    })

  // An import not yet published is not the chamber's yet (HeldRows.ts).
  const shown = sql.literal(andShownRow(sliced, "x"))

  return ExportRepo.of({
    extent: (tenantId, collection) => {
      const { table, where } = SOURCES[collection]
      return sql<{ readonly count: number; readonly last: number }>`SELECT count(*)::float8 AS count, coalesce(max(x.id), 0)::float8 AS last
        FROM ${sql.literal(table)} x WHERE x.tenant_id = ${tenantId}${sql.literal(where)}${shown}`.pipe(
        Effect.map((rows) => ({ count: rows[0]!.count, last: rows[0]!.last })),
        Effect.orDie
      )
    },
    page: (tenantId, collection, after, last, limit) => {
      const { select, table, where } = SOURCES[collection]
      return sql<StoredRow>`SELECT ${sql.literal(select)} FROM ${sql.literal(table)} x
        WHERE x.tenant_id = ${tenantId} AND x.id > ${after} AND x.id <= ${last}${sql.literal(where)}${shown}
        ORDER BY x.id LIMIT ${limit}`.pipe(
        Effect.flatMap((rows) => (collection === "invoices" ? withLines(tenantId, rows) : Effect.succeed(rows))),
        Effect.orDie
      )
    }
  })
}))
