/**
 * What the admin TUI reads and does (docs/admin.md): the port its screens take as a prop.
 * AdminDataLive.ts implements it over the core services and WebhookAdmin; tests give a fake.
 * Every method answers with a promise that rejects only with a DataError.
 */
import type { AttemptView, Backlog, DeliveryView, HookView, SubscriptionBacklog } from "@chamber/core"

export type { AttemptView, Backlog, DeliveryView, SubscriptionBacklog }

export interface TenantRow {
  /** The public id, `chm_…`. */
  readonly id: string
  readonly name: string
  readonly created_at: string
}

export interface KeyRow {
  readonly id: number
  readonly name: string
  readonly prefix: string
  readonly scopes: ReadonlyArray<string>
  readonly daily_limit: number
  readonly created_at: string
  readonly last_used_at: string | null
  readonly revoked_at: string | null
  /** Requests in the rolling 24 hours (docs/operations.md "Rate limits"); null when not known (revoked, or the store did not answer). */
  readonly used_today: number | null
}

export interface MintRequest {
  readonly tenant: string
  /** A chamber_admin of the tenant (docs/api.md "Authentication and scopes"). */
  readonly asEmail: string
  readonly name: string
  readonly scopes: ReadonlyArray<string>
  readonly dailyLimit: number
}

export interface MintedKey {
  readonly name: string
  readonly prefix: string
  readonly scopes: ReadonlyArray<string>
  /** The plaintext: shown once. */
  readonly key: string
}

export interface HookRow extends HookView {
  /** The latest attempts, oldest first, true for a 2xx answer (the sparkline). */
  readonly recent: ReadonlyArray<boolean>
}

export type DeliveryStatus = DeliveryView["status"]

export interface DeliveryQuery {
  readonly tenant: string
  readonly status?: DeliveryStatus | undefined
  readonly hookId?: number | undefined
  readonly ids?: ReadonlyArray<number> | undefined
}

export interface FailedQuery {
  readonly tenant: string
  readonly hookId?: number | undefined
  /** ISO time: deliveries made at or after it. */
  readonly since?: string | undefined
}

export interface ReplayResult {
  readonly replayed: ReadonlyArray<number>
  /** Not found, or already waiting to be sent. */
  readonly skipped: ReadonlyArray<number>
}

/** A subscription's new signing secret (shown once) and when its previous one stops signing. */
export interface RotatedSecret {
  readonly id: number
  readonly url: string
  readonly secret: string
  readonly previous_expires_at: string
}

/** The Backlog screen's figures: the chamber's subscriptions, each with its share, and the whole database's. */
export interface BacklogView {
  /** The chamber's subscriptions, the longest-waiting first. */
  readonly subscriptions: ReadonlyArray<SubscriptionBacklog>
  /** Every chamber's: what `chamber deliveries summary` and the metrics' gauges report. */
  readonly total: Backlog
}

/** Called as work advances: `done` of `total` items. */
export type Progress = (done: number, total: number) => void

/**
 * Why a read or an action did not happen: `unavailable` (the database does not answer; retried
 * by itself), `refused` (the service said no, e.g. not a chamber_admin), `unexpected` (anything else).
 */
export class DataError extends Error {
  readonly kind: "unavailable" | "refused" | "unexpected"
  constructor(kind: DataError["kind"], message: string) {
    super(message)
    this.kind = kind
  }
}

export interface AdminData {
  readonly tenants: () => Promise<ReadonlyArray<TenantRow>>
  /** The emails of the tenant's chamber_admin people: who may mint. */
  readonly admins: (tenant: string) => Promise<ReadonlyArray<string>>
  readonly keys: (tenant: string) => Promise<ReadonlyArray<KeyRow>>
  readonly mintKey: (request: MintRequest) => Promise<MintedKey>
  readonly revokeKey: (prefix: string) => Promise<void>
  readonly hooks: (tenant: string) => Promise<ReadonlyArray<HookRow>>
  /** Active again with the count at 0; how many there were. */
  readonly reactivate: (ids: ReadonlyArray<number>, progress?: Progress) => Promise<number>
  /** Newest first, at most 100. */
  readonly deliveries: (query: DeliveryQuery) => Promise<ReadonlyArray<DeliveryView>>
  /** The ids of every failed delivery that matches, newest first. */
  readonly failedDeliveries: (query: FailedQuery) => Promise<ReadonlyArray<number>>
  /** The webhook backlog: the chamber's subscriptions and the whole database (docs/admin.md "The backlog"). */
  readonly backlog: (tenant: string) => Promise<BacklogView>
  readonly replay: (ids: ReadonlyArray<number>, progress?: Progress) => Promise<ReplayResult>
  /** A new secret; the old one signs beside it for a day (as POST /api/v1/hooks/{hook}/rotate-secret by default). */
  readonly rotateSecret: (hookId: number) => Promise<RotatedSecret>
  readonly close: () => Promise<void>
}
