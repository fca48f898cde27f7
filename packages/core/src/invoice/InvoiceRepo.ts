/** Storage port for invoices and their lines. Every method is scoped by tenant. */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { Page } from "../Pagination.ts"
import type { Locked } from "../shared/Ports.ts"
import type { SortOrder } from "../Sort.ts"
import type { Invoice, InvoiceLineStored, InvoiceSortColumns, InvoiceStatus, InvoiceStored } from "./Invoice.ts"

export type InvoiceSort = SortOrder<(typeof InvoiceSortColumns)[number]>

export class InvoiceRepo extends Context.Service<InvoiceRepo, {
  /** Newest issued first by default (drafts, never issued, last). */
  readonly list: (tenantId: number, status: InvoiceStatus | undefined, sort: InvoiceSort | undefined, page: number, updatedSince?: string) => Effect.Effect<Page<Invoice>>
  readonly find: (tenantId: number, id: number) => Effect.Effect<Invoice | undefined>
  /** Every stored field, and what the API shows, read once and locked for an update in this transaction. */
  readonly findForUpdate: (tenantId: number, id: number) => Effect.Effect<Locked<InvoiceStored, Invoice> | undefined>
  /** A draft and its lines; the invoice gets a random pay token, never shown. */
  readonly insert: (tenantId: number, values: InvoiceStored, lines: ReadonlyArray<InvoiceLineStored>) => Effect.Effect<Invoice>
  readonly update: (tenantId: number, id: number, changes: Partial<InvoiceStored>) => Effect.Effect<Invoice>
  /**
   * The tenant's next invoice number (1, 2, 3...), taken in the caller's transaction: concurrent
   * takers wait for each other, and a rollback gives the number back, so the sequence has no gaps.
   */
  readonly nextNumber: (tenantId: number) => Effect.Effect<number>
  /** Whether an invoice of the tenant has `number`. */
  readonly numberTaken: (tenantId: number, number: string) => Effect.Effect<boolean>
  /** Moves the tenant's sequence on to `n` when it is behind, so that `nextNumber` never gives a number already kept. */
  readonly sequenceAtLeast: (tenantId: number, n: number) => Effect.Effect<void>
}>()("chamber/InvoiceRepo") {}
