/** The invoices endpoints (docs/api.md "Invoices"): the contract only. */
import * as Schema from "effect/Schema"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import { Field, Invoice, InvoiceCreate, InvoiceResource, InvoiceStatuses } from "@chamber/core"
import { Authentication } from "../shared/Access.ts"
import { createEndpoint, listEndpoint } from "../shared/Endpoints.ts"
import { BusinessRuleError, NotFoundError } from "../shared/HttpErrors.ts"
import { operation } from "../shared/Operation.ts"
import { RowId } from "../shared/Params.ts"

export const InvoiceResponse = Schema.Struct({ data: Invoice })
export const InvoiceList = InvoiceResource.List

export class InvoicesGroup extends HttpApiGroup.make("invoices")
  .add(
    listEndpoint("/", InvoiceList, {
      access: "invoices:read",
      summary: "List invoices",
      description:
        "100 a page, optionally of one `status`. `sort`: issued_at, -issued_at, created_at or -created_at (default: newest issued " +
        "first, drafts last); anything else means the default. Money is in integer cents."
    }, { status: Schema.optionalKey(Field.oneOf(InvoiceStatuses, "open").schema) }),
    createEndpoint("/", InvoiceCreate, InvoiceResponse, {
      access: "invoices:write",
      summary: "Create a draft invoice",
      description:
        "A draft from `lines` (1 to 500), each a `description`, a `unit` price in dollars as a string (`\"450.00\"`, never cents) " +
        "and a `quantity` (default 1). Totals are computed exactly in cents; the currency is the chamber's. A draft has no " +
        "number and no due date."
    }),
    HttpApiEndpoint.post("issue", "/:invoice/issue", {
      params: { invoice: RowId },
      success: InvoiceResponse,
      error: [NotFoundError, BusinessRuleError]
    }).pipe(operation({
      access: "invoices:write",
      summary: "Issue a draft invoice",
      description:
        "Assigns the chamber's next invoice number (`INV-000001`) and a due date (today + the chamber's net terms), makes it " +
        "open and fires `invoice.issued`. An invoice that is not a draft answers 422 `{message}` (no `errors`)."
    }))
  )
  .middleware(Authentication)
  .prefix("/api/v1/invoices")
  .annotateMerge(OpenApi.annotations({ description: "Invoices to members: drafts, issued with a number and a due date." })) {}
