/**
 * Payment use cases (docs/api.md "Payments", ruling 15): a payment applies in full to one open
 * invoice and never exceeds its balance; the payment that clears the balance makes the invoice
 * paid and fires invoice.paid, all in one transaction. Each payment fires payment.created, then
 * its invoice's invoice.updated, then invoice.paid when it clears the balance (ruling 34). The
 * API records payments without a gateway; embedders record gateway payments (amounts in cents)
 * through the same rules.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Transactor } from "../shared/Ports.ts"
import { decodeInput } from "../shared/Input.ts"
import type { InvalidInput } from "../shared/Errors.ts"
import { Outbox } from "../outbox/Outbox.ts"
import type { ListQuery, Page } from "../Pagination.ts"
import { parseSort } from "../Sort.ts"
import { InvoiceNotFound, InvoiceNotOpen } from "../invoice/InvoiceErrors.ts"
import { InvoiceRepo } from "../invoice/InvoiceRepo.ts"
import { GatewayPayment, type Payment, type PaymentCreate, PaymentResource, PaymentSortColumns } from "./Payment.ts"
import { Overpayment, RefundNotAccepted } from "./PaymentErrors.ts"
import { PaymentRepo } from "./PaymentRepo.ts"

export type PaymentListQuery = ListQuery

export type PaymentRefused = InvoiceNotFound | InvoiceNotOpen | RefundNotAccepted | Overpayment

const decodeGateway = (input: unknown) => decodeInput(GatewayPayment, input)

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

    const apply = (
      tenantId: number,
      invoiceId: number,
      payment: { readonly method: string; readonly amount_cents: number; readonly gateway: string | null } & Partial<Record<"received_on" | "reference" | "notes", string | null>>,
      options: RecordOptions = {}
    ) =>
      tx.withTransaction(Effect.gen(function*() {
        const invoice = (yield* invoices.findForUpdate(tenantId, invoiceId))?.stored
        if (invoice === undefined) return yield* new InvoiceNotFound({ id: invoiceId })
        if (payment.method === "refund") return yield* new RefundNotAccepted()
        // Only an invoice that was issued (it has a number) took payments before it ended: a draft voided never did.
        const ended = options.beforeEnded === true && ENDED.has(invoice.status) && invoice.number !== null
        if (invoice.status !== "open" && !ended) return yield* new InvoiceNotOpen({ status: invoice.status, action: "take a payment" })
        if (payment.amount_cents > invoice.balance_cents) {
          return yield* new Overpayment({ amount_cents: payment.amount_cents, balance_cents: invoice.balance_cents, currency: invoice.currency })
        }
        const recorded = yield* repo.insert(tenantId, invoiceId, PaymentResource.defaults({ ...payment, member_id: invoice.member_id }))
        const balance = invoice.balance_cents - payment.amount_cents
        const paid = balance === 0 && !ended
        const updated = yield* invoices.update(tenantId, invoiceId, {
          amount_paid_cents: invoice.amount_paid_cents + payment.amount_cents,
          balance_cents: balance,
          ...(paid ? { status: "paid" as const } : {})
        })
        yield* outbox.append(tenantId, "payment.created", recorded)
        yield* outbox.append(tenantId, "invoice.updated", updated)
        if (paid) yield* outbox.append(tenantId, "invoice.paid", updated)
        return recorded
      }))

    const list = Effect.fn("Payments.list")(function*(tenantId: number, query: PaymentListQuery) {
      return yield* repo.list(tenantId, parseSort(query.sort, PaymentSortColumns), query.page ?? 1, query.updated_since)
    })
    const record = Effect.fn("Payments.record")(function*(tenantId: number, invoiceId: number, input: PaymentCreate, options?: RecordOptions) {
      return yield* apply(tenantId, invoiceId, { ...input, amount_cents: input.amount, gateway: null }, options)
    })

    const recordGateway = Effect.fn("Payments.recordGateway")(function*(tenantId: number, invoiceId: number, input: GatewayPayment, options?: RecordOptions) {
      return yield* apply(tenantId, invoiceId, yield* decodeGateway(input), options)
    })

    return Payments.of({ list, record, recordGateway })
  }))
}
