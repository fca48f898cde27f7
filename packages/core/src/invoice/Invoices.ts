/**
 * Invoice use cases (docs/api.md "Invoices"): a draft is made from lines in dollars, totalled
 * exactly in cents; issuing a draft takes the tenant's next number and sets the due date from its
 * net terms, and fires invoice.issued in the same transaction. Embedders may also void an invoice
 * or mark it uncollectible. Every write fires its event in its transaction (ruling 34): a draft
 * invoice.created, each later change invoice.updated, then the state change the spec names.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Transactor } from "../shared/Ports.ts"
import type { InvalidInput } from "../shared/Errors.ts"
import { requireOwn } from "../shared/Input.ts"
import { Outbox } from "../outbox/Outbox.ts"
import type { ListQuery, Page } from "../Pagination.ts"
import { parseSort } from "../Sort.ts"
import * as F from "../resource/Field.ts"
import { MemberRepo } from "../member/MemberRepo.ts"
import { TenantRepo } from "../tenant/TenantRepo.ts"
import { TenantNotFound } from "../tenant/TenantErrors.ts"
import { type Invoice, type InvoiceCreate, type InvoiceLineStored, InvoiceResource, InvoiceSortColumns, type InvoiceStatus } from "./Invoice.ts"
import { InvoiceNotDraft, InvoiceNotFound, InvoiceNotOpen, InvoiceNotVoidable, InvoiceTotalTooLarge } from "./InvoiceErrors.ts"
import { InvoiceRepo } from "./InvoiceRepo.ts"

export interface InvoiceListQuery extends ListQuery {
  readonly status?: InvoiceStatus | undefined
}

/** `INV-` + the number, at least six digits: `INV-000001` (ruling 12). */
export const invoiceNumber = (prefix: string, n: number) => `${prefix}${String(n).padStart(6, "0")}`

/** The UTC calendar date `days` after `at`. */
export const dateAfter = (at: Date, days: number) => new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate() + days)).toISOString().slice(0, 10)

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
      const lines: Array<InvoiceLineStored> = input.lines.map((l) => ({ description: l.description, unit_cents: l.unit, quantity: l.quantity ?? 1 }))
      const subtotal = lines.reduce((sum, l) => sum + BigInt(l.unit_cents) * BigInt(l.quantity), 0n)
      if (subtotal > BigInt(F.MAX_CENTS)) return yield* new InvoiceTotalTooLarge()
      yield* requireOwn("member_id", input.member_id, (id) => members.find(tenantId, id))
      const tenant = yield* tenantOf(tenantId)
      const total = Number(subtotal)
      const values = InvoiceResource.defaults({
        member_id: input.member_id,
        memo: input.memo,
        status: "draft",
        currency: tenant.currency,
        subtotal_cents: total,
        total_cents: total,
        amount_paid_cents: 0,
        balance_cents: total
      })
      return yield* tx.withTransaction(Effect.tap(repo.insert(tenantId, values, lines), (invoice) => outbox.append(tenantId, "invoice.created", invoice)))
    })
    /** `wanted` when no invoice has it (the sequence moved past it when it is one of the sequence's), else the next number. */
    const numberFor = Effect.fnUntraced(function*(tenantId: number, prefix: string, wanted: string | undefined) {
      if (wanted !== undefined && !(yield* repo.numberTaken(tenantId, wanted))) {
        const ofSequence = wanted.startsWith(prefix) && /^\d+$/.test(wanted.slice(prefix.length)) ? Number(wanted.slice(prefix.length)) : undefined
        if (ofSequence !== undefined && Number.isSafeInteger(ofSequence)) yield* repo.sequenceAtLeast(tenantId, ofSequence)
        return wanted
      }
      return invoiceNumber(prefix, yield* repo.nextNumber(tenantId))
    })

    const issue = Effect.fn("Invoices.issue")(function*(tenantId: number, id: number, number?: string) {
      return yield* tx.withTransaction(Effect.gen(function*() {
        const current = yield* locked(tenantId, id)
        if (current.status !== "draft") return yield* new InvoiceNotDraft({ status: current.status })
        const tenant = yield* tenantOf(tenantId)
        const now = new Date()
        const settled = current.balance_cents === 0
        const invoice = yield* repo.update(tenantId, id, {
          number: yield* numberFor(tenantId, tenant.invoice_prefix, number),
          status: settled ? "paid" : "open",
          issued_at: now.toISOString(),
          due_on: dateAfter(now, tenant.net_terms)
        })
        yield* outbox.append(tenantId, "invoice.updated", invoice)
        yield* outbox.append(tenantId, "invoice.issued", invoice)
        if (settled) yield* outbox.append(tenantId, "invoice.paid", invoice)
        return invoice
      }))
    })

    const void_ = Effect.fn("Invoices.void")(function*(tenantId: number, id: number) {
      return yield* tx.withTransaction(Effect.gen(function*() {
        const current = yield* locked(tenantId, id)
        if (current.status !== "draft" && current.status !== "open") return yield* new InvoiceNotVoidable({ status: current.status })
        return yield* updated(tenantId, id, { status: "void", voided_at: new Date().toISOString() })
      }))
    })

    const markUncollectible = Effect.fn("Invoices.markUncollectible")(function*(tenantId: number, id: number) {
      return yield* tx.withTransaction(Effect.gen(function*() {
        const current = yield* locked(tenantId, id)
        if (current.status !== "open") return yield* new InvoiceNotOpen({ status: current.status, action: "be marked uncollectible" })
        return yield* updated(tenantId, id, { status: "uncollectible" })
      }))
    })

    return Invoices.of({ list, get, create, issue, void: void_, markUncollectible })
  }))
}
