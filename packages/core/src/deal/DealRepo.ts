/** Storage port for deals. Every method is scoped by tenant. */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { Page } from "../Pagination.ts"
import type { Locked } from "../shared/Ports.ts"
import type { SortOrder } from "../Sort.ts"
import type { Deal, DealSortColumns, DealStored } from "./Deal.ts"

export type DealSort = SortOrder<(typeof DealSortColumns)[number]>

export class DealRepo extends Context.Service<DealRepo, {
  readonly list: (tenantId: number, sort: DealSort | undefined, page: number, updatedSince?: string) => Effect.Effect<Page<Deal>>
  readonly find: (tenantId: number, id: number) => Effect.Effect<Deal | undefined>
  /** Every stored field, write-only ones included, and what the API shows, read once and locked for an update in this transaction. */
  readonly findForUpdate: (tenantId: number, id: number) => Effect.Effect<Locked<DealStored, Deal> | undefined>
  readonly insert: (tenantId: number, values: DealStored) => Effect.Effect<Deal>
  readonly update: (tenantId: number, id: number, changes: Partial<DealStored>) => Effect.Effect<Deal>
}>()("chamber/DealRepo") {}
