/** Payments handlers: each endpoint of PaymentsGroup as one call of the core service. */
import * as Effect from "effect/Effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { Payments } from "@chamber/core"
import { Api } from "../Api.ts"
import * as Respond from "../server/Respond.ts"
import { PaymentList, PaymentResponse } from "./PaymentsGroup.ts"

export const PaymentsHandlers = HttpApiBuilder.group(Api, "payments", Effect.fn(function*(handlers) {
  const payments = yield* Payments
  return handlers
    .handle("record", ({ params, payload }) => Respond.single(PaymentResponse, 201, (tenant) => payments.record(tenant, params.invoice, payload)))
    .handle("list", ({ query }) => Respond.page(PaymentList, query.page, (tenant, page) => payments.list(tenant, { ...query, page })))
}))
