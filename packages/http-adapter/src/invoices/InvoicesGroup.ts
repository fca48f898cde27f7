/** The invoices endpoints (docs/api.md "Invoices"): the contract only. */
import * as Schema from "effect/Schema"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import { Field, Invoice, InvoiceCreate, InvoiceResource, InvoiceSortColumns, InvoiceStatuses } from "@chamber/core"
import { Authentication, Idempotent } from "../shared/Access.ts"
import { createEndpoint, listEndpoint } from "../shared/Endpoints.ts"
import { BusinessRuleError, NotFoundError } from "../shared/HttpErrors.ts"
import { operation } from "../shared/Operation.ts"
import { RowId } from "../shared/Params.ts"
import { single } from "../shared/Responses.ts"

/** An invoice as each answer shows it: a new draft, just issued, and open with a payment on it. */
const draft = {
  id: 7,
  attributes: {
    member_id: 12,
    number: null,
    status: "draft",
    currency: "USD",
    subtotal_cents: 47500,
    total_cents: 47500,
    amount_paid_cents: 0,
    balance_cents: 47500,
    issued_at: null,
    due_on: null,
    voided_at: null,
    memo: "Thank you for being a member."
  },
  created_at: "2026-11-02T15:04:05.000Z",
  updated_at: "2026-11-02T15:04:05.000Z"
} as const
const issued = {
  ...draft,
  attributes: { ...draft.attributes, number: "INV-000042", status: "open", issued_at: "2026-11-02T15:10:00.000Z", due_on: "2026-12-02" },
  updated_at: "2026-11-02T15:10:00.000Z"
} as const
const partlyPaid = {
  ...issued,
  attributes: { ...issued.attributes, amount_paid_cents: 25000, balance_cents: 22500 },
  updated_at: "2026-11-20T09:30:00.000Z"
} as const

export const InvoiceResponse = single(Invoice, issued)
export const DraftInvoiceResponse = single(Invoice, draft)
export const InvoiceList = InvoiceResource.List.annotate({
  examples: [{ data: [partlyPaid], meta: { current_page: 1, per_page: 100, total: 1, last_page: 1 } }]
})

export class InvoicesGroup extends HttpApiGroup.make("invoices")
  .add(
    listEndpoint("/", InvoiceList, {
      access: "invoices:read",
      sort: InvoiceSortColumns,
      summary: "List invoices",
      description:
        "100 a page, optionally of one `status`. `sort`: issued_at, -issued_at, created_at, -created_at, updated_at or -updated_at (default: newest issued " +
        "first, drafts last); anything else means the default. Money is in integer cents."
    }, { status: Schema.optionalKey(Field.oneOf(InvoiceStatuses, "open").schema) }),
    createEndpoint("/", InvoiceCreate, DraftInvoiceResponse, {
      access: "invoices:write",
      summary: "Create a draft invoice",
      description:
        "A draft from `lines` (1 to 500), each a `description`, a `unit` price in dollars as a string (`\"450.00\"`, never cents) " +
        "and a `quantity` (default 1). Totals are computed exactly in cents, at most 90071992547409.91 (2^53 - 1 cents; a " +
        "larger total is a 422 on `lines`); the currency is the chamber's. A draft has no number and no due date. " +
        "Fires `invoice.created`."
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
        "open and fires `invoice.updated` then `invoice.issued`. An invoice that is not a draft answers 422 `{message}` (no `errors`)."
    }))
  )
  .middleware(Idempotent).middleware(Authentication)
  .prefix("/api/v1/invoices")
  .annotateMerge(OpenApi.annotations({ description: "Invoices to members: drafts, issued with a number and a due date." })) {}
