/**
 * Removing a chamber and everything stored of it (docs/operations.md "Offboarding a chamber").
 * Confirmed by the chamber's exact name. A dry run counts what would go and changes nothing. A
 * removal first stops the chamber at once (one transaction: marked as being deleted, keys revoked,
 * webhook subscriptions deactivated), then empties every table holding its rows in bounded
 * batches, then its saved rate-limit windows, the tenant row last. Interrupted, it is run again:
 * the mark makes the next run resume it.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { Tenant } from "./Tenant.ts"
import { ChamberNameNotConfirmed, TenantNotFound, TenantRemovalUnfinished } from "./TenantErrors.ts"
import { type RemovalBegun, TenantRemovalRepo } from "./TenantRemovalRepo.ts"
import { TenantRepo } from "./TenantRepo.ts"

/** The rows a batch removes at most unless told otherwise. */
export const DEFAULT_REMOVAL_BATCH = 500
export const MAX_REMOVAL_BATCH = 10_000
/** The pseudo-tables a removal counts besides those with a `tenant_id` column. */
export const RATE_LIMIT_WINDOWS = "rate_limit_windows"
export const TENANTS = "tenants"
/**
 * A serving instance saves the rate-limit counts of keys it admitted each second; its last save
 * of the chamber's keys lands within this long of their revocation, so their windows are removed
 * no sooner.
 */
const RATE_LIMIT_SAVE_MS = 2_000
/** Passes over the tables before a removal that keeps finding new rows gives up (a writer still at work). */
const PASSES = 3

export interface RemovalProgress {
  /** The table being emptied, and how many of its rows have gone. */
  readonly table: string
  readonly removed: number
  /** Rows gone so far in every table, of `total` (what was there when the removal began, at least). */
  readonly done: number
  readonly total: number
}

export interface RemovalOptions {
  /** The chamber's name, exactly: anything else removes nothing. */
  readonly confirm: string
  readonly dryRun?: boolean | undefined
  /** Rows a batch removes at most (1 to MAX_REMOVAL_BATCH, default DEFAULT_REMOVAL_BATCH). */
  readonly batchSize?: number | undefined
  readonly progress?: ((event: RemovalProgress) => void) | undefined
  /** Told once the chamber is stopped, before its rows are removed. */
  readonly begun?: ((begun: RemovalBegun & { readonly resumed: boolean }) => void) | undefined
}

export interface RemovalResult {
  readonly tenant: Tenant
  readonly dryRun: boolean
  /** It was already being deleted when this run began (an earlier run was interrupted). */
  readonly resumed: boolean
  /** Per table, the rows this run removed (a dry run: would remove); `tenants` and `rate_limit_windows` included. */
  readonly counts: Readonly<Record<string, number>>
  readonly keysRevoked: number
  readonly subscriptionsStopped: number
}

export class TenantRemoval extends Context.Service<TenantRemoval, {
  readonly remove: (ref: string, options: RemovalOptions) => Effect.Effect<RemovalResult, TenantNotFound | ChamberNameNotConfirmed | TenantRemovalUnfinished>
}>()("chamber/TenantRemoval") {
  static readonly layer = Layer.effect(TenantRemoval, Effect.gen(function*() {
    const tenants = yield* TenantRepo
    const repo = yield* TenantRemovalRepo

    const countAll = Effect.fn("TenantRemoval.count")(function*(tables: ReadonlyArray<string>, tenant: Tenant) {
      const counts: Record<string, number> = {}
      for (const table of tables) counts[table] = yield* repo.count(table, tenant.id)
      counts[RATE_LIMIT_WINDOWS] = yield* repo.countRateLimitWindows(tenant.public_id)
      return counts
    })

    const empty = Effect.fn("TenantRemoval.empty")(function*(table: string, tenant: Tenant, batch: number, removed: (n: number) => void) {
      for (;;) {
        const n = yield* repo.removeBatch(table, tenant.id, batch)
        if (n === 0) return
        removed(n)
      }
    })

    const remove = Effect.fn("TenantRemoval.remove")(function*(ref: string, options: RemovalOptions) {
      const tenant = yield* tenants.find(ref)
      if (tenant === undefined) return yield* new TenantNotFound({ ref })
      if (options.confirm !== tenant.name) return yield* new ChamberNameNotConfirmed({ ref: tenant.public_id, name: tenant.name })
      const batch = options.batchSize ?? DEFAULT_REMOVAL_BATCH
      if (!Number.isInteger(batch) || batch < 1 || batch > MAX_REMOVAL_BATCH) {
        return yield* Effect.die(new Error(`The batch size must be a whole number from 1 to ${MAX_REMOVAL_BATCH}.`))
      }
      const resumed = tenant.deleting_at !== null
      const tables = yield* repo.tables
      if (options.dryRun === true) {
        const counts = { ...(yield* countAll(tables, tenant)), [TENANTS]: 1 }
        return { tenant, dryRun: true, resumed, counts, keysRevoked: 0, subscriptionsStopped: 0 } satisfies RemovalResult
      }

      const begun = yield* repo.begin(tenant.id)
      options.begun?.({ ...begun, resumed })
      yield* Effect.annotateCurrentSpan({ tenant: tenant.public_id, resumed })
      // A table's rows gone are those its batches removed, or those there at the start when more
      // (the triggers of a table emptied before it take some: member_names with members).
      const before = yield* countAll(tables, tenant)
      const removed: Record<string, number> = Object.fromEntries([...tables, RATE_LIMIT_WINDOWS].map((t) => [t, 0]))
      const gone = (table: string) => Math.max(before[table]!, removed[table]!)
      let total = Object.values(before).reduce((a, b) => a + b, 0) + 1
      let finished = 0
      const tell = (table: string, done: number) => {
        total = Math.max(total, done)
        options.progress?.({ table, removed: removed[table]!, done, total })
      }

      for (let pass = 1;; pass++) {
        finished = 0
        for (const table of tables) {
          yield* empty(table, tenant, batch, (n) => {
            removed[table]! += n
            tell(table, finished + removed[table]!)
          })
          finished += gone(table)
        }
        const wait = Date.parse(begun.deleting_at) + RATE_LIMIT_SAVE_MS - (yield* Clock.currentTimeMillis)
        if (wait > 0) yield* Effect.sleep(Math.min(wait, RATE_LIMIT_SAVE_MS))
        removed[RATE_LIMIT_WINDOWS]! += yield* repo.removeRateLimitWindows(tenant.public_id)
        finished += gone(RATE_LIMIT_WINDOWS)
        const left = Object.entries(yield* countAll(tables, tenant)).filter(([, n]) => n > 0)
        if (left.length === 0) break
        if (pass === PASSES) return yield* new TenantRemovalUnfinished({ ref: tenant.public_id, left: Object.fromEntries(left) })
      }
      removed[TENANTS] = (yield* repo.removeTenant(tenant.id)) ? 1 : 0
      tell(TENANTS, total)
      const counts = Object.fromEntries([...tables, RATE_LIMIT_WINDOWS].map((t) => [t, gone(t)]))
      return {
        tenant,
        dryRun: false,
        resumed,
        counts: { ...counts, [TENANTS]: removed[TENANTS]! },
        keysRevoked: begun.keys_revoked,
        subscriptionsStopped: begun.subscriptions_stopped
      } satisfies RemovalResult
    })

    return TenantRemoval.of({ remove })
  }))
}
