/** Payments handlers: each endpoint of PaymentsGroup as one call of the core service. */
import * as Effect from "effect/Effect"
import { Payments } from "@chamber/core"
import * as Respond from "../server/Respond.ts"
import { groupHandlers } from "../shared/Served.ts"
import { PaymentList, PaymentResponse, PaymentsGroup } from "./PaymentsGroup.ts"

export default groupHandlers(PaymentsGroup, Effect.fn(function*(handlers) {
  const payments = yield* Payments
  return handlers
    .handle("record", ({ params, payload }) => Respond.single(PaymentResponse, 201, (tenant) => payments.record(tenant, params.invoice, payload)))
    .handle("list", ({ query }) => Respond.page(PaymentList, query.page, (tenant, page) => payments.list(tenant, { ...query, page })))
}))
