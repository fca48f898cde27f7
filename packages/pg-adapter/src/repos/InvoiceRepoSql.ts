/** Invoices, their lines and their number sequence in SQL, every statement scoped by tenant (`resourceTable`). */
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import { InvoiceRepo, InvoiceResource, type InvoiceSort } from "@chamber/core"
import { randomBytes } from "node:crypto"
import { orderBy } from "./PageSql.ts"
import { resourceTable } from "./ResourceSql.ts"
import { ImportSlices } from "./HeldRows.ts"

/** Newest issued first by default; drafts, never issued, after the issued ones. */
const order = orderBy<InvoiceSort["column"]>("i", { issued_at: "i.issued_at", created_at: "i.created_at" }, "issued_at", ["issued_at"])
const orderOf = (sort: InvoiceSort | undefined) => order(sort ?? { column: "issued_at", descending: true })

export const InvoiceRepoSql = Layer.effect(InvoiceRepo, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const sliced = yield* ImportSlices
  const invoices = resourceTable(sql, InvoiceResource, "invoices", "i", sliced)
  return InvoiceRepo.of({
    find: invoices.find,
    findForUpdate: invoices.findForUpdate,
    update: invoices.update,
    list: (tenantId, status, sort, page, updatedSince) =>
      invoices.page(status === undefined ? sql`i.tenant_id = ${tenantId}` : sql`i.tenant_id = ${tenantId} AND i.status = ${status}`, orderOf(sort), page, updatedSince),
    insert: (tenantId, values, lines) =>
      Effect.gen(function*() {
        const invoice = yield* invoices.insert(tenantId, values, { pay_token: randomBytes(24).toString("base64url") })
        const rows = lines.map((line, position): Record<string, unknown> => ({ tenant_id: tenantId, invoice_id: invoice.id, position, ...line }))
        if (Arr.isReadonlyArrayNonEmpty(rows)) yield* sql`INSERT INTO invoice_lines ${sql.insert(rows)}`.pipe(Effect.orDie)
        return invoice
      }),
    nextNumber: (tenantId) =>
      sql<{ readonly last_number: bigint | string | number }>`INSERT INTO invoice_sequences (tenant_id, last_number) VALUES (${tenantId}, 1)
         ON CONFLICT (tenant_id) DO UPDATE SET last_number = invoice_sequences.last_number + 1
         RETURNING last_number`.pipe(Effect.map((rows) => Number(rows[0]!.last_number)), Effect.orDie),
    numberTaken: (tenantId, number) =>
      sql`SELECT 1 FROM invoices WHERE tenant_id = ${tenantId} AND number = ${number}`.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie),
    sequenceAtLeast: (tenantId, n) =>
      sql`INSERT INTO invoice_sequences (tenant_id, last_number) VALUES (${tenantId}, ${n})
         ON CONFLICT (tenant_id) DO UPDATE SET last_number = greatest(invoice_sequences.last_number, excluded.last_number)`.pipe(Effect.asVoid, Effect.orDie)
  })
}))
