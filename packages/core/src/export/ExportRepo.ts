/** Storage port for `chamber export`: a chamber's rows, collection by collection, read by id in pages. */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { Collection } from "../import/ImportSteps.ts"

/** The collections read from storage; custom field definitions come from the tenant's repository. */
export type StoredCollection = Exclude<Collection, "fields">

/**
 * A row as stored: `id`, every stored field of its resource by the API's name (write-only ones
 * too, custom fields whole, hidden ones included), and the columns the import takes besides (a
 * contact's `member_id` and whether it is `subscribed`); an invoice's `lines` as stored
 * (`unit_cents`), in order.
 */
export type StoredRow = { readonly id: number } & Readonly<Record<string, unknown>>

export interface Extent {
  /** How many rows there are, up to `last`. */
  readonly count: number
  /** The highest id, 0 when there are none: an export reads no further, so what is written meanwhile cannot name what it left out. */
  readonly last: number
}

export class ExportRepo extends Context.Service<ExportRepo, {
  readonly extent: (tenantId: number, collection: StoredCollection) => Effect.Effect<Extent>
  /** At most `limit` rows with ids above `after` and at most `last`, by id. */
  readonly page: (tenantId: number, collection: StoredCollection, after: number, last: number, limit: number) => Effect.Effect<ReadonlyArray<StoredRow>>
}>()("chamber/ExportRepo") {}
