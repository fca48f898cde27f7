/**
 * Invoices (docs/api.md "Invoices"): the one declaration of an invoice's fields and of the lines
 * a draft is made from. Money is shown in integer cents and sent as dollar strings (docs/api.md
 * "Money").
 */
import * as Schema from "effect/Schema"
import * as F from "../resource/Field.ts"
import { defineResource } from "../resource/Resource.ts"
import { resourceScopes } from "../resource/ResourceScopes.ts"
import { sortColumns } from "../Sort.ts"

export const InvoiceScopes = resourceScopes("invoices", ["read", "write"])

export const InvoiceStatuses = ["draft", "open", "paid", "void", "uncollectible"] as const
export type InvoiceStatus = (typeof InvoiceStatuses)[number]
export const InvoiceSortColumns = sortColumns("issued_at", "created_at")

const cents = (example: number) => F.readOnly(F.bigInteger(0, example))

export const InvoiceResource = defineResource("Invoice", {
  member_id: F.required(F.bigInteger(1, 12)),
  number: F.readOnlyNullable(F.text(undefined, "INV-000042")),
  status: F.readOnly(F.oneOf(InvoiceStatuses, "open")),
  currency: F.readOnly(F.text(3, "USD")),
  subtotal_cents: cents(47500),
  total_cents: cents(47500),
  amount_paid_cents: cents(25000),
  balance_cents: cents(22500),
  issued_at: F.readOnlyNullable(F.dateTime("2026-11-02T15:04:05.000Z")),
  due_on: F.readOnlyNullable(F.date("2026-12-02")),
  voided_at: F.readOnlyNullable(F.dateTime("2026-12-20T10:00:00.000Z")),
  memo: F.nullable(F.text(2000, "Annual dues, thank you for being a member."))
})

/** The most lines one invoice takes: what one statement stores with room to spare. */
export const MAX_INVOICE_LINES = 500

/** One line of a draft: a description, the price of one in dollars, how many (1 when omitted). */
export const InvoiceLineResource = defineResource("InvoiceLine", {
  description: F.required(F.filledText(255, "Annual membership dues")),
  unit: F.required(F.dollars(0, "450.00")),
  quantity: F.defaulted(F.integer(1, F.MAX_CENTS, 1), 1)
})

const lines = Schema.Array(InvoiceLineResource.Create).annotate({ message: "The {field} field must be an array." }).check(
  Schema.makeFilter((xs: ReadonlyArray<unknown>) => xs.length >= 1, {
    message: "The {field} field must have at least 1 item.",
    toJsonSchema: () => ({ minItems: 1 })
  }),
  Schema.makeFilter((xs: ReadonlyArray<unknown>) => xs.length <= MAX_INVOICE_LINES, {
    message: `The {field} field must not have more than ${MAX_INVOICE_LINES} items.`,
    toJsonSchema: () => ({ maxItems: MAX_INVOICE_LINES })
  })
)

const { member_id, memo } = InvoiceResource.Create.fields

/** A draft: its member, its lines (at least one) and an optional memo. */
export const InvoiceCreate = Schema.Struct({ member_id, lines: lines.pipe(Schema.annotateKey({ messageMissingKey: "The {field} field is required." })), memo })
  .annotate({
    identifier: "InvoiceCreate",
    // Examples are wire values: dollar strings, as a client sends them.
    examples: [{ member_id: 12, lines: [{ description: "Annual membership dues", unit: "450.00", quantity: 1 }, { description: "Gala ticket", unit: "25.00", quantity: 1 }], memo: "Thank you for being a member." } as never]
  })
export type InvoiceCreate = typeof InvoiceCreate.Type
export type InvoiceLine = InvoiceCreate["lines"][number]

export const Invoice = InvoiceResource.Envelope
export type Invoice = typeof Invoice.Type
export type InvoiceStored = ReturnType<typeof InvoiceResource.defaults>

/** A line as stored: the price of one in cents. */
export interface InvoiceLineStored {
  readonly description: string
  readonly unit_cents: number
  readonly quantity: number
}
