/** The payments endpoints (docs/api.md "Payments"): the contract only. */
import * as Schema from "effect/Schema"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import { Payment, PaymentCreate, PaymentResource, PaymentSortColumns } from "@chamber/core"
import { Authentication, Idempotent } from "../shared/Access.ts"
import { listEndpoint } from "../shared/Endpoints.ts"
import { BusinessRuleError, NotFoundError, ValidationError } from "../shared/HttpErrors.ts"
import { operation } from "../shared/Operation.ts"
import { RowId } from "../shared/Params.ts"
import { single } from "../shared/Responses.ts"

export const PaymentResponse = single(Payment)
export const PaymentList = PaymentResource.List

export class PaymentsGroup extends HttpApiGroup.make("payments")
  .add(
    HttpApiEndpoint.post("record", "/api/v1/invoices/:invoice/payments", {
      params: { invoice: RowId },
      payload: PaymentCreate,
      success: PaymentResponse.pipe(HttpApiSchema.status(201)),
      error: [NotFoundError, ValidationError, BusinessRuleError]
    }).pipe(operation({
      access: "payments:write",
      summary: "Record a payment on an invoice",
      description:
        "The payment applies in full to this invoice; `amount` is in dollars as a string (`\"225.00\"`, never cents), greater " +
        "than zero. Answers 422 `{message}` (no `errors`) when the invoice is not open, when `method` is refund, or when the " +
        "amount is more than the balance (the message states the balance). Fires `payment.created`, then the invoice's " +
        "`invoice.updated`; the payment that clears the balance makes the invoice paid and fires `invoice.paid` after them."
    })),
    listEndpoint("/api/v1/payments", PaymentList, {
      access: "payments:read",
      sort: PaymentSortColumns,
      summary: "List payments",
      description:
        "100 a page. `sort`: received_on, -received_on, created_at, -created_at, updated_at or -updated_at (default: newest received first, undated " +
        "last); anything else means the default."
    })
  )
  .middleware(Idempotent).middleware(Authentication)
  .annotateMerge(OpenApi.annotations({ description: "Payments received against invoices." })) {}
