/** What can go wrong with a payment, as domain facts (docs/api.md "Payments"). */
import * as Schema from "effect/Schema"
import * as F from "../resource/Field.ts"

/** Refunds are not recorded through the API (spec 4.5): a business-rule 422. */
export class RefundNotAccepted extends Schema.TaggedError<RefundNotAccepted>()("RefundNotAccepted", {}) {
  readonly kind = "BusinessRule" as const
  override get message() {
    return "A refund cannot be recorded as a payment; use card, check, cash, ach, comp or other."
  }
}

/** A payment larger than the invoice's outstanding balance: a business-rule 422 stating the balance. */
export class Overpayment extends Schema.TaggedError<Overpayment>()("Overpayment", {
  amount_cents: Schema.Number,
  balance_cents: Schema.Number,
  currency: Schema.String
}) {
  readonly kind = "BusinessRule" as const
  override get message() {
    return `The payment of ${F.formatCents(this.amount_cents)} ${this.currency} is more than the invoice's outstanding balance of ${
      F.formatCents(this.balance_cents)
    } ${this.currency} (balance_cents: ${this.balance_cents}).`
  }
}
