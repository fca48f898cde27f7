/** Payments handlers: each endpoint of PaymentsGroup as one call of the core service. */
import * as Effect from "effect/Effect"
import { Payments } from "@chamber/core"
import * as Kit from "../server/Kit.ts"
import { group } from "../server/Group.ts"
import { PaymentList, PaymentResponse } from "./PaymentsGroup.ts"

export const PaymentsHandlers = group("payments", Effect.fn(function*(handlers) {
  const payments = yield* Payments
  return handlers
    .handle("record", ({ params, payload }) => Kit.single(PaymentResponse, 201, (tenant) => payments.record(tenant, params.invoice, payload)))
    .handle("list", ({ query }) => Kit.page(PaymentList, query.page, (tenant, page) => payments.list(tenant, { ...query, page })))
}))
