/** Invoices handlers: each endpoint of InvoicesGroup as one call of the core service. */
import * as Effect from "effect/Effect"
import { Invoices } from "@chamber/core"
import * as Respond from "../server/Respond.ts"
import { groupHandlers } from "../shared/Served.ts"
import { InvoiceList, InvoiceResponse, InvoicesGroup } from "./InvoicesGroup.ts"

export default groupHandlers(InvoicesGroup, Effect.fn(function*(handlers) {
  const invoices = yield* Invoices
  return handlers
    .handle("list", ({ query }) => Respond.page(InvoiceList, query.page, (tenant, page) => invoices.list(tenant, { ...query, page })))
    .handle("create", ({ payload }) => Respond.single(InvoiceResponse, 201, (tenant) => invoices.create(tenant, payload)))
    .handle("issue", ({ params }) => Respond.single(InvoiceResponse, 200, (tenant) => invoices.issue(tenant, params.invoice)))
}))
