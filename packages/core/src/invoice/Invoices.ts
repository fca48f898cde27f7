/**
 * Invoice use cases (docs/api.md "Invoices"): a draft is made from lines in dollars, totalled
 * exactly in cents; issuing a draft takes the tenant's next number and sets the due date from its
 * net terms, and fires invoice.issued in the same transaction. Embedders may also void an invoice
 * or mark it uncollectible. Every write fires its event in its transaction (ruling 34): a draft
 * invoice.created, each later change invoice.updated, then the state change the spec names.
 * The rules are the pure functions below, which an import's set-wise writes use too.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import { Transactor } from "../shared/Ports.ts"
import type { InvalidInput } from "../shared/Errors.ts"
import { requireOwn } from "../shared/Input.ts"
import { type AppendedEvent, Outbox } from "../outbox/Outbox.ts"
import type { ListQuery, Page } from "../Pagination.ts"
import { parseSort } from "../Sort.ts"
import * as F from "../resource/Field.ts"
import { MemberRepo } from "../member/MemberRepo.ts"
import { TenantRepo } from "../tenant/TenantRepo.ts"
import { TenantNotFound } from "../tenant/TenantErrors.ts"
import {
  type Invoice,
  type InvoiceCreate,
  type InvoiceLineStored,
  InvoiceResource,
  InvoiceSortColumns,
  type InvoiceStatus,
  type InvoiceStored
} from "./Invoice.ts"
import { InvoiceNotDraft, InvoiceNotFound, InvoiceNotOpen, InvoiceNotVoidable, InvoiceTotalTooLarge } from "./InvoiceErrors.ts"
import { InvoiceRepo } from "./InvoiceRepo.ts"

export interface InvoiceListQuery extends ListQuery {
  readonly status?: InvoiceStatus | undefined
}

/** `INV-` + the number, at least six digits: `INV-000001` (ruling 12). */
export const invoiceNumber = (prefix: string, n: number) => `${prefix}${String(n).padStart(6, "0")}`

/** The UTC calendar date `days` after `at`. */
export const dateAfter = (at: Date, days: number) => new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate() + days)).toISOString().slice(0, 10)

/** A draft of `input` in the tenant's `currency`, totalled exactly in cents: its stored values and lines; refused past the largest amount. */
export const newInvoice = (
  input: InvoiceCreate,
  currency: string
): Result.Result<{ readonly values: InvoiceStored; readonly lines: ReadonlyArray<InvoiceLineStored> }, InvoiceTotalTooLarge> => {
  const lines: Array<InvoiceLineStored> = input.lines.map((l) => ({ description: l.description, unit_cents: l.unit, quantity: l.quantity ?? 1 }))
  const subtotal = lines.reduce((sum, l) => sum + BigInt(l.unit_cents) * BigInt(l.quantity), 0n)
  if (subtotal > BigInt(F.MAX_CENTS)) return Result.fail(new InvoiceTotalTooLarge())
  const total = Number(subtotal)
  const values = InvoiceResource.defaults({
    member_id: input.member_id,
    memo: input.memo,
    status: "draft",
    currency,
    subtotal_cents: total,
    total_cents: total,
    amount_paid_cents: 0,
    balance_cents: total
  })
  return Result.succeed({ values, lines })
}

/** Where the tenant's invoice numbers come from: which are taken, and its sequence. */
export interface InvoiceNumbering {
  readonly taken: (number: string) => Effect.Effect<boolean>
  /** Moves the sequence on to `n` when it is behind. */
  readonly atLeast: (n: number) => Effect.Effect<void>
  /** The sequence's next number, taken. */
  readonly next: () => Effect.Effect<number>
}

/**
 * The number an invoice is issued with: `wanted` when no invoice has it (the sequence moved past
 * it when it is one of the sequence's, `<prefix><digits>`), else the sequence's next.
 */
export const numberFor = Effect.fnUntraced(function*(numbering: InvoiceNumbering, prefix: string, wanted: string | undefined) {
  if (wanted !== undefined && !(yield* numbering.taken(wanted))) {
    const ofSequence = wanted.startsWith(prefix) && /^\d+$/.test(wanted.slice(prefix.length)) ? Number(wanted.slice(prefix.length)) : undefined
    if (ofSequence !== undefined && Number.isSafeInteger(ofSequence)) yield* numbering.atLeast(ofSequence)
    return wanted
  }
  return invoiceNumber(prefix, yield* numbering.next())
})

/** Only a draft is issued. */
export const issuable = (current: InvoiceStored): Result.Result<void, InvoiceNotDraft> =>
  current.status === "draft" ? Result.succeed(undefined) : Result.fail(new InvoiceNotDraft({ status: current.status }))

/** A draft issued `at` with `number`: open, or paid when it owes nothing; due after the tenant's net terms. */
export const issuedChanges = (current: InvoiceStored, number: string, at: Date, netTerms: number): Partial<InvoiceStored> => ({
  number,
  status: current.balance_cents === 0 ? "paid" : "open",
  issued_at: at.toISOString(),
  due_on: dateAfter(at, netTerms)
})

/** What issuing fires, about the invoice as issued: invoice.updated, invoice.issued, and invoice.paid when it owes nothing. */
export const issueEvents = (invoice: Invoice): ReadonlyArray<AppendedEvent> => [
  { type: "invoice.updated", data: invoice },
  { type: "invoice.issued", data: invoice },
  ...(invoice.attributes.status === "paid" ? [{ type: "invoice.paid", data: invoice } as const] : [])
]

/** A draft or open invoice voided `at`. */
export const voidChanges = (current: InvoiceStored, at: Date): Result.Result<Partial<InvoiceStored>, InvoiceNotVoidable> =>
  current.status === "draft" || current.status === "open"
    ? Result.succeed({ status: "void", voided_at: at.toISOString() })
    : Result.fail(new InvoiceNotVoidable({ status: current.status }))

/** An open invoice marked uncollectible. */
export const uncollectibleChanges = (current: InvoiceStored): Result.Result<Partial<InvoiceStored>, InvoiceNotOpen> =>
  current.status === "open"
    ? Result.succeed({ status: "uncollectible" })
    : Result.fail(new InvoiceNotOpen({ status: current.status, action: "be marked uncollectible" }))

export class Invoices extends Context.Service<Invoices, {
  readonly list: (tenantId: number, query: InvoiceListQuery) => Effect.Effect<Page<Invoice>>
  readonly get: (tenantId: number, id: number) => Effect.Effect<Invoice, InvoiceNotFound>
  /** A draft: no number, no due date; the tenant's currency. */
  readonly create: (tenantId: number, input: InvoiceCreate) => Effect.Effect<Invoice, InvalidInput | InvoiceTotalTooLarge>
  /**
   * Draft to open (or straight to paid when it totals zero), with number and due date; fires invoice.issued.
   * `number` (an import's) is kept when no invoice of the tenant has it; else the next one is taken.
   */
  readonly issue: (tenantId: number, id: number, number?: string) => Effect.Effect<Invoice, InvoiceNotFound | InvoiceNotDraft>
  /** A draft or open invoice becomes void (core only). */
  readonly void: (tenantId: number, id: number) => Effect.Effect<Invoice, InvoiceNotFound | InvoiceNotVoidable>
  /** An open invoice becomes uncollectible (core only). */
  readonly markUncollectible: (tenantId: number, id: number) => Effect.Effect<Invoice, InvoiceNotFound | InvoiceNotOpen>
}>()("chamber/Invoices") {
  static readonly layer = Layer.effect(Invoices, Effect.gen(function*() {
    const repo = yield* InvoiceRepo
    const members = yield* MemberRepo
    const tenants = yield* TenantRepo
    const outbox = yield* Outbox
    const tx = yield* Transactor

    const tenantOf = (tenantId: number) =>
      Effect.flatMap(tenants.find(tenantId), (t) => (t === undefined ? Effect.die(new TenantNotFound({ ref: String(tenantId) })) : Effect.succeed(t)))

    const locked = (tenantId: number, id: number) =>
      Effect.flatMap(repo.findForUpdate(tenantId, id), (i) => (i === undefined ? Effect.fail(new InvoiceNotFound({ id })) : Effect.succeed(i.stored)))

    /** A status change (always shown) and its invoice.updated, in the caller's transaction. */
    const updated = (tenantId: number, id: number, changes: Parameters<typeof repo.update>[2]) =>
      Effect.tap(repo.update(tenantId, id, changes), (invoice) => outbox.append(tenantId, "invoice.updated", invoice))

    const list = Effect.fn("Invoices.list")(function*(tenantId: number, query: InvoiceListQuery) {
      return yield* repo.list(tenantId, query.status, parseSort(query.sort, InvoiceSortColumns), query.page ?? 1, query.updated_since)
    })

    const get = Effect.fn("Invoices.get")(function*(tenantId: number, id: number) {
      const invoice = yield* repo.find(tenantId, id)
      return invoice === undefined ? yield* new InvoiceNotFound({ id }) : invoice
    })
    const create = Effect.fn("Invoices.create")(function*(tenantId: number, input: InvoiceCreate) {
      const tenant = yield* tenantOf(tenantId)
      const { values, lines } = yield* Effect.fromResult(newInvoice(input, tenant.currency))
      yield* requireOwn("member_id", input.member_id, (id) => members.find(tenantId, id))
      return yield* tx.withTransaction(Effect.tap(repo.insert(tenantId, values, lines), (invoice) => outbox.append(tenantId, "invoice.created", invoice)))
    })

    const numbering = (tenantId: number): InvoiceNumbering => ({
      taken: (number) => repo.numberTaken(tenantId, number),
      atLeast: (n) => repo.sequenceAtLeast(tenantId, n),
      next: () => repo.nextNumber(tenantId)
    })

    const issue = Effect.fn("Invoices.issue")(function*(tenantId: number, id: number, number?: string) {
      return yield* tx.withTransaction(Effect.gen(function*() {
        const current = yield* locked(tenantId, id)
        yield* Effect.fromResult(issuable(current))
        const tenant = yield* tenantOf(tenantId)
        const invoice = yield* repo.update(tenantId, id, issuedChanges(current, yield* numberFor(numbering(tenantId), tenant.invoice_prefix, number), new Date(), tenant.net_terms))
        for (const event of issueEvents(invoice)) yield* outbox.append(tenantId, event.type, event.data)
        return invoice
      }))
    })

    const void_ = Effect.fn("Invoices.void")(function*(tenantId: number, id: number) {
      return yield* tx.withTransaction(Effect.gen(function*() {
        const current = yield* locked(tenantId, id)
        return yield* updated(tenantId, id, yield* Effect.fromResult(voidChanges(current, new Date())))
      }))
    })

    const markUncollectible = Effect.fn("Invoices.markUncollectible")(function*(tenantId: number, id: number) {
      return yield* tx.withTransaction(Effect.gen(function*() {
        const current = yield* locked(tenantId, id)
        return yield* updated(tenantId, id, yield* Effect.fromResult(uncollectibleChanges(current)))
      }))
    })

    return Invoices.of({ list, get, create, issue, void: void_, markUncollectible })
  }))
}
