/** What can go wrong with invoices, as domain facts (docs/api.md "Invoices", "Errors"). */
import * as Schema from "effect/Schema"
import * as F from "../resource/Field.ts"
import { summarize } from "../resource/Issues.ts"

export class InvoiceNotFound extends Schema.TaggedError<InvoiceNotFound>()("InvoiceNotFound", { id: Schema.Number }) {
  readonly kind = "NotFound" as const
  override get message() {
    return `No invoice ${this.id} in this chamber.`
  }
}

/** Only a draft is issued (spec 3.2): a business-rule 422. */
export class InvoiceNotDraft extends Schema.TaggedError<InvoiceNotDraft>()("InvoiceNotDraft", { status: Schema.String }) {
  readonly kind = "BusinessRule" as const
  override get message() {
    return `Only a draft invoice can be issued; this invoice is ${this.status}.`
  }
}

/** Payments are taken on open invoices only (ruling 15): a business-rule 422 naming the status. */
export class InvoiceNotOpen extends Schema.TaggedError<InvoiceNotOpen>()("InvoiceNotOpen", {
  status: Schema.String,
  /** What only an open invoice can do: "take a payment". */
  action: Schema.String
}) {
  readonly kind = "BusinessRule" as const
  override get message() {
    return `This invoice is ${this.status}; only an open invoice can ${this.action}.`
  }
}

/** Void applies to a draft or an open invoice. */
export class InvoiceNotVoidable extends Schema.TaggedError<InvoiceNotVoidable>()("InvoiceNotVoidable", { status: Schema.String }) {
  readonly kind = "BusinessRule" as const
  override get message() {
    return `Only a draft or open invoice can be voided; this invoice is ${this.status}.`
  }
}

/** The lines add up to more than a response can carry exactly (docs/api.md "Money"). */
export class InvoiceTotalTooLarge extends Schema.TaggedError<InvoiceTotalTooLarge>()("InvoiceTotalTooLarge", {}) {
  readonly kind = "Invalid" as const
  get errors() {
    return { lines: [`The invoice total must not be greater than ${F.formatCents(F.MAX_CENTS)}.`] }
  }
  override get message() {
    return summarize(this.errors)
  }
}
