/**
 * Payment use cases (docs/api.md "Payments", ruling 15): a payment applies in full to one open
 * invoice and never exceeds its balance; the payment that clears the balance makes the invoice
 * paid and fires invoice.paid, all in one transaction. Each payment fires payment.created, then
 * its invoice's invoice.updated, then invoice.paid when it clears the balance (ruling 34). The
 * API records payments without a gateway; embedders record gateway payments (amounts in cents)
 * through the same rules, `applyPayment` and `paymentEvents`, which an import's set-wise writes use too.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import { Transactor } from "../shared/Ports.ts"
import { decodeInput } from "../shared/Input.ts"
import type { InvalidInput } from "../shared/Errors.ts"
import { type AppendedEvent, Outbox } from "../outbox/Outbox.ts"
import type { ListQuery, Page } from "../Pagination.ts"
import { parseSort } from "../Sort.ts"
import { InvoiceNotFound, InvoiceNotOpen } from "../invoice/InvoiceErrors.ts"
import type { Invoice, InvoiceStored } from "../invoice/Invoice.ts"
import { InvoiceRepo } from "../invoice/InvoiceRepo.ts"
import { GatewayPayment, type Payment, type PaymentCreate, PaymentResource, PaymentSortColumns, type PaymentStored } from "./Payment.ts"
import { Overpayment, RefundNotAccepted } from "./PaymentErrors.ts"
import { PaymentRepo } from "./PaymentRepo.ts"

export type PaymentListQuery = ListQuery

export type PaymentRefused = InvoiceNotFound | InvoiceNotOpen | RefundNotAccepted | Overpayment

/** A gateway's payment, checked. */
export const gatewayPayment = (input: GatewayPayment) => decodeInput(GatewayPayment, input)

/** A payment as it is applied: the amount in cents, and who took it (none for the API's). */
export type PaymentApplied =
  & { readonly method: string; readonly amount_cents: number; readonly gateway: string | null }
  & Partial<Record<"received_on" | "reference" | "notes", string | null>>

/** A payment recorded through the API: no gateway. */
export const apiPayment = (input: PaymentCreate): PaymentApplied => ({ ...input, amount_cents: input.amount, gateway: null })

/** How a payment is taken beyond the API's rules: only an import asks for more. */
export interface RecordOptions {
  /**
   * The payment was made before its invoice was voided or marked uncollectible (an import
   * recreating a chamber's history, docs/cli.md "Import"): such an invoice, if it was issued, takes it too, and
   * keeps its status; it counts toward the amount paid and lowers the balance all the same.
   */
  readonly beforeEnded?: boolean | undefined
}

/** The statuses an invoice can have when a payment made before it ended is imported. */
const ENDED = new Set(["void", "uncollectible"])

/** A payment applied to an invoice: the payment's stored values, the invoice's changes, and whether they make it paid. */
export interface PaymentApplication {
  readonly values: PaymentStored
  readonly changes: Partial<InvoiceStored>
  readonly paid: boolean
}

/**
 * `payment` applied in full to the invoice of id `invoiceId` as stored now (`undefined`: the
 * tenant has none): refused unless the invoice is open (or ended after it was issued, for a
 * payment made `beforeEnded`) and owes at least the amount; else it pays the amount off the
 * balance, and becomes paid when that clears it, unless it has ended.
 */
export const applyPayment = (
  invoiceId: number,
  invoice: InvoiceStored | undefined,
  payment: PaymentApplied,
  options: RecordOptions = {}
): Result.Result<PaymentApplication, PaymentRefused> => {
  if (invoice === undefined) return Result.fail(new InvoiceNotFound({ id: invoiceId }))
  if (payment.method === "refund") return Result.fail(new RefundNotAccepted())
  // Only an invoice that was issued (it has a number) took payments before it ended: a draft voided never did.
  const ended = options.beforeEnded === true && ENDED.has(invoice.status) && invoice.number !== null
  if (invoice.status !== "open" && !ended) return Result.fail(new InvoiceNotOpen({ status: invoice.status, action: "take a payment" }))
  if (payment.amount_cents > invoice.balance_cents) {
    return Result.fail(new Overpayment({ amount_cents: payment.amount_cents, balance_cents: invoice.balance_cents, currency: invoice.currency }))
  }
  const balance = invoice.balance_cents - payment.amount_cents
  const paid = balance === 0 && !ended
  return Result.succeed({
    values: PaymentResource.defaults({ ...payment, member_id: invoice.member_id }),
    changes: { amount_paid_cents: invoice.amount_paid_cents + payment.amount_cents, balance_cents: balance, ...(paid ? { status: "paid" as const } : {}) },
    paid
  })
}

/** What a payment fires: payment.created, its invoice's invoice.updated, then invoice.paid when it paid the invoice (ruling 34). */
export const paymentEvents = (recorded: Payment, invoice: Invoice, paid: boolean): ReadonlyArray<AppendedEvent> => [
  { type: "payment.created", data: recorded },
  { type: "invoice.updated", data: invoice },
  ...(paid ? [{ type: "invoice.paid", data: invoice } as const] : [])
]

export class Payments extends Context.Service<Payments, {
  readonly list: (tenantId: number, query: PaymentListQuery) => Effect.Effect<Page<Payment>>
  /** A payment recorded through the API (`gateway: null`). */
  readonly record: (tenantId: number, invoiceId: number, input: PaymentCreate, options?: RecordOptions) => Effect.Effect<Payment, PaymentRefused>
  /** A payment taken by a gateway (core only): the same rules, the amount in cents. */
  readonly recordGateway: (
    tenantId: number,
    invoiceId: number,
    input: GatewayPayment,
    options?: RecordOptions
  ) => Effect.Effect<Payment, PaymentRefused | InvalidInput>
}>()("chamber/Payments") {
  static readonly layer = Layer.effect(Payments, Effect.gen(function*() {
    const repo = yield* PaymentRepo
    const invoices = yield* InvoiceRepo
    const outbox = yield* Outbox
    const tx = yield* Transactor

    const apply = (tenantId: number, invoiceId: number, payment: PaymentApplied, options?: RecordOptions) =>
      tx.withTransaction(Effect.gen(function*() {
        const invoice = (yield* invoices.findForUpdate(tenantId, invoiceId))?.stored
        const { values, changes, paid } = yield* Effect.fromResult(applyPayment(invoiceId, invoice, payment, options))
        const recorded = yield* repo.insert(tenantId, invoiceId, values)
        const updated = yield* invoices.update(tenantId, invoiceId, changes)
        for (const event of paymentEvents(recorded, updated, paid)) yield* outbox.append(tenantId, event.type, event.data)
        return recorded
      }))

    const list = Effect.fn("Payments.list")(function*(tenantId: number, query: PaymentListQuery) {
      return yield* repo.list(tenantId, parseSort(query.sort, PaymentSortColumns), query.page ?? 1, query.updated_since)
    })
    const record = Effect.fn("Payments.record")(function*(tenantId: number, invoiceId: number, input: PaymentCreate, options?: RecordOptions) {
      return yield* apply(tenantId, invoiceId, apiPayment(input), options)
    })

    const recordGateway = Effect.fn("Payments.recordGateway")(function*(tenantId: number, invoiceId: number, input: GatewayPayment, options?: RecordOptions) {
      return yield* apply(tenantId, invoiceId, yield* gatewayPayment(input), options)
    })

    return Payments.of({ list, record, recordGateway })
  }))
}
