/**
 * Payments (docs/api.md "Payments"): the one declaration of a payment's fields. The amount is
 * sent as a dollar string (`amount`) and shown in cents (`amount_cents`).
 */
import * as Schema from "effect/Schema"
import * as F from "../resource/Field.ts"
import { defineResource } from "../resource/Resource.ts"
import { resourceScopes } from "../resource/ResourceScopes.ts"
import { sortColumns } from "../Sort.ts"

export const PaymentScopes = resourceScopes("payments", ["read", "write"])

export const PaymentMethods = ["card", "check", "cash", "ach", "comp", "refund", "other"] as const
export type PaymentMethod = (typeof PaymentMethods)[number]
export const PaymentSortColumns = sortColumns("received_on", "created_at")

export const PaymentResource = defineResource("Payment", {
  member_id: F.readOnly(F.bigInteger(1, 12)),
  method: F.required(F.oneOf(PaymentMethods, "check")),
  gateway: F.readOnlyNullable(F.text(255, "stripe")),
  amount_cents: F.readOnly(F.bigInteger(1, 22500)),
  received_on: F.nullable(F.date("2026-11-20")),
  reference: F.nullable(F.text(255, "Check #1042")),
  notes: F.writeOnly(F.text(2000, "Dropped off at the front desk."))
})

const { method, received_on, reference, notes } = PaymentResource.Create.fields

/** A payment against one invoice: `amount` in dollars, greater than zero. */
export const PaymentCreate = Schema.Struct({
  method,
  amount: F.dollars(1, "225.00").schema.pipe(Schema.annotateKey({ messageMissingKey: "The {field} field is required." })),
  received_on,
  reference,
  notes
}).annotate({
  identifier: "PaymentCreate",
  examples: [{ method: "check", amount: "225.00", received_on: "2026-11-20", reference: "Check #1042", notes: "Dropped off at the front desk." } as never]
})
export type PaymentCreate = typeof PaymentCreate.Type

/** A payment recorded by another system (a card gateway) through the core library: the amount in cents. */
export const GatewayPayment = Schema.Struct({
  method: F.oneOf(PaymentMethods, "card").schema,
  amount_cents: F.integer(1, F.MAX_CENTS, 22500).schema,
  /** Who took it: `stripe`, `square`... (ruling 15). */
  gateway: F.filledText(255, "stripe").schema,
  received_on: Schema.optionalKey(Schema.NullOr(F.date("2026-11-20").schema)),
  reference: Schema.optionalKey(Schema.NullOr(F.text(255, "ch_3Nx").schema)),
  notes: Schema.optionalKey(Schema.NullOr(F.text(2000, "Paid online.").schema))
})
export type GatewayPayment = typeof GatewayPayment.Type

export const Payment = PaymentResource.Envelope
export type Payment = typeof Payment.Type
export type PaymentStored = ReturnType<typeof PaymentResource.defaults>
