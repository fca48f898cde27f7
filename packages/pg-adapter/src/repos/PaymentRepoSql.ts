/** Payments in SQL, every statement scoped by tenant (`resourceTable`). */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import { PaymentRepo, PaymentResource, type PaymentSort } from "@chamber/core"
import { orderBy } from "./PageSql.ts"
import { resourceTable } from "./ResourceSql.ts"
import { ImportSlices } from "./HeldRows.ts"

/** Newest received first by default; payments without a date after the dated ones, either way. */
const order = orderBy<PaymentSort["column"]>("p", { received_on: "p.received_on", created_at: "p.created_at" }, "received_on", ["received_on"])
const orderOf = (sort: PaymentSort | undefined) => order(sort ?? { column: "received_on", descending: true })

export const PaymentRepoSql = Layer.effect(PaymentRepo, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const sliced = yield* ImportSlices
  const payments = resourceTable(sql, PaymentResource, "payments", "p", sliced)
  return PaymentRepo.of({
    list: (tenantId, sort, page, updatedSince) => payments.page(sql`p.tenant_id = ${tenantId}`, orderOf(sort), page, updatedSince),
    insert: (tenantId, invoiceId, values) => payments.insert(tenantId, values, { invoice_id: invoiceId })
  })
}))
