/** Storage port for payments. Every method is scoped by tenant. */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { Page } from "../Pagination.ts"
import type { SortOrder } from "../Sort.ts"
import type { Payment, PaymentSortColumns, PaymentStored } from "./Payment.ts"

export type PaymentSort = SortOrder<(typeof PaymentSortColumns)[number]>

export class PaymentRepo extends Context.Service<PaymentRepo, {
  /** Newest received first by default (those without a date last). */
  readonly list: (tenantId: number, sort: PaymentSort | undefined, page: number, updatedSince?: string) => Effect.Effect<Page<Payment>>
  /** A payment applied in full to one invoice. */
  readonly insert: (tenantId: number, invoiceId: number, values: PaymentStored) => Effect.Effect<Payment>
}>()("chamber/PaymentRepo") {}
