/**
 * Storage port for removing a chamber (docs/operations.md "Offboarding a chamber"): which tables
 * hold chambers' rows, and the chamber's rows taken from them a bounded batch at a time.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"

/** What beginning a removal stopped at once. */
export interface RemovalBegun {
  /** When the removal first began (a run that resumes keeps the first time). */
  readonly deleting_at: string
  readonly keys_revoked: number
  readonly subscriptions_stopped: number
}

export class TenantRemovalRepo extends Context.Service<TenantRemovalRepo, {
  /**
   * Marks the chamber as being deleted, revokes its live keys and deactivates its webhook
   * subscriptions (no relay claims their deliveries any more), in one transaction.
   */
  readonly begin: (tenantId: number) => Effect.Effect<RemovalBegun>
  /**
   * Every table with a `tenant_id` column, read from the database's catalogue, in the order they
   * are emptied: a table before those its foreign keys reference, and tables with no foreign key
   * to `tenants` (kept by triggers of others) last.
   */
  readonly tables: Effect.Effect<ReadonlyArray<string>>
  /** The chamber's rows in `table`. */
  readonly count: (table: string, tenantId: number) => Effect.Effect<number>
  /** Removes at most `limit` of the chamber's rows from `table`, in a transaction of its own; returns how many. */
  readonly removeBatch: (table: string, tenantId: number, limit: number) => Effect.Effect<number>
  /** The saved rate-limit windows of the chamber's keys (keyed by its public id). */
  readonly countRateLimitWindows: (publicId: string) => Effect.Effect<number>
  readonly removeRateLimitWindows: (publicId: string) => Effect.Effect<number>
  /** Removes the tenant row of a chamber being deleted; false when there was none. */
  readonly removeTenant: (tenantId: number) => Effect.Effect<boolean>
}>()("chamber/TenantRemovalRepo") {}
