/** Invoices handlers: each endpoint of InvoicesGroup as one call of the core service. */
import * as Effect from "effect/Effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { Invoices } from "@chamber/core"
import { Api } from "../Api.ts"
import * as Respond from "../server/Respond.ts"
import { InvoiceList, InvoiceResponse } from "./InvoicesGroup.ts"

export const InvoicesHandlers = HttpApiBuilder.group(Api, "invoices", Effect.fn(function*(handlers) {
  const invoices = yield* Invoices
  return handlers
    .handle("list", ({ query }) => Respond.page(InvoiceList, query.page, (tenant, page) => invoices.list(tenant, { ...query, page })))
    .handle("create", ({ payload }) => Respond.single(InvoiceResponse, 201, (tenant) => invoices.create(tenant, payload)))
    .handle("issue", ({ params }) => Respond.single(InvoiceResponse, 200, (tenant) => invoices.issue(tenant, params.invoice)))
}))
