/** Invoices handlers: each endpoint of InvoicesGroup as one call of the core service. */
import * as Effect from "effect/Effect"
import { Invoices } from "@chamber/core"
import * as Kit from "../server/Kit.ts"
import { group } from "../server/Group.ts"
import { InvoiceList, InvoiceResponse } from "./InvoicesGroup.ts"

export const InvoicesHandlers = group("invoices", Effect.fn(function*(handlers) {
  const invoices = yield* Invoices
  return handlers
    .handle("list", ({ query }) => Kit.page(InvoiceList, query.page, (tenant, page) => invoices.list(tenant, { ...query, page })))
    .handle("create", ({ payload }) => Kit.single(InvoiceResponse, 201, (tenant) => invoices.create(tenant, payload)))
    .handle("issue", ({ params }) => Kit.single(InvoiceResponse, 200, (tenant) => invoices.issue(tenant, params.invoice)))
}))
