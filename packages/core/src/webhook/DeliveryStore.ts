/**
 * The port of the relay's side of the delivery tables (docs/webhooks.md "Delivery"; pg-adapter
 * `DeliveryStoreSql` implements it): claim due deliveries
 * with `FOR UPDATE SKIP LOCKED` and a short lease that the relay renews while it holds them, so
 * many relays share one database and a crashed relay's deliveries are claimed again soon after
 * it stops renewing (at once on PostgreSQL, where a running relay holds a lock others can see);
 * claim chambers in turn, each within its share of the relay's sends, a receiver that keeps
 * timing out one send at a time; record attempts and settle deliveries in one transaction per
 * batch, counting failed deliveries per subscription and timeouts per receiver atomically.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type { OutboxEvent } from "../outbox/Outbox.ts"
import type { WebhookSecretUnreadable } from "./HookErrors.ts"

/** A delivery this relay holds the lease of. */
export interface ClaimedDelivery {
  readonly id: number
  readonly tenantId: number
  readonly hookId: number
  readonly url: string
  /** The subscription's secret, or why this relay cannot decrypt it (that delivery alone fails). */
  readonly secret: Result.Result<string, WebhookSecretUnreadable>
  /** Attempts made before this one. */
  readonly attemptCount: number
  readonly event: OutboxEvent
}

/** What one attempt came to. */
export interface AttemptOutcome {
  readonly delivery: ClaimedDelivery
  readonly attemptedAt: Date
  readonly ok: boolean
  readonly status: number | null
  readonly latencyMs: number
  readonly responseExcerpt: string | null
  readonly error: string | null
  readonly retryAfterSeconds: number | null
  /** No answer within the timeout: counted against the receiver (absent: false). */
  readonly timedOut?: boolean | undefined
}

export interface ClaimOptions {
  readonly relayId: string
  readonly limit: number
  readonly leaseMs: number
  /** At most this many deliveries of one subscription leased at once, across all relays. */
  readonly perSubscription: number
  /** At most this many sends of one chamber in flight in this relay (default: no cap). */
  readonly perChamber?: number | undefined
  /** This relay's sends in flight, by chamber: they count against `perChamber`. */
  readonly sending?: ReadonlyMap<number, number> | undefined
}

/** What one claim leased. */
export interface Claimed {
  readonly deliveries: ReadonlyArray<ClaimedDelivery>
  /**
   * Whether due deliveries were left because all of their subscription's places were leased:
   * when those leases are settled there is more to claim at once, without news of a change.
   */
  readonly capped: boolean
}

/**
 * Attempts in a row that timed out after which a chamber's receiver (webhook_origin: host and
 * port) gets one send at a time, across all relays and all of the chamber's subscriptions to it,
 * until one succeeds.
 */
export const PROBE_AFTER_TIMEOUTS = 3

/** Attempts after the first: a delivery whose last retry fails is failed (docs/webhooks.md "Retries"). */
export const RETRIES_PER_DELIVERY = 3

/** What a written batch came to. */
export interface Recorded {
  /** The deliveries that no longer exist (their subscription was deleted): their outcomes were dropped. */
  readonly vanished: ReadonlyArray<number>
  /** Whether a delivery settled let a later one of its subscription and resource go: a reason to claim again. */
  readonly freed: boolean
}

/**
 * The database refused a batch of outcomes as it is (a constraint, a value it cannot store):
 * writing the same batch again cannot succeed, though its outcomes may, one by one.
 */
export class OutcomesRefused extends Schema.TaggedError<OutcomesRefused>()("OutcomesRefused", { reason: Schema.String }) {
  override get message() {
    return `The database refused the outcomes: ${this.reason}`
  }
}

/** The relay's hold on the database, by which others see it alive, failed or was lost. */
export class RelayPresenceLost extends Schema.TaggedError<RelayPresenceLost>()("RelayPresenceLost", { reason: Schema.String }) {
  override get message() {
    return `The relay's lock is not held: ${this.reason}`
  }
}

export class DeliveryStore extends Context.Service<DeliveryStore, {
  readonly claim: (options: ClaimOptions) => Effect.Effect<Claimed>
  /**
   * Records each attempt and settles its delivery: succeeded; pending again after
   * `retryDelayMs(retryIndex, retryAfterSeconds)` while retries remain; else failed, counted
   * against its subscription (inactive after DEACTIVATE_AFTER in a row). A delivery whose lease
   * `relayId` lost meanwhile (another relay claimed it) keeps its attempt but is not settled here. The outcome of a delivery that no
   * longer exists is dropped and named in `vanished`. Fails with OutcomesRefused when the
   * database refuses the batch for good; dies when it does not answer.
   */
  readonly record: (
    relayId: string,
    outcomes: ReadonlyArray<AttemptOutcome>,
    retryDelayMs: (retryIndex: number, retryAfterSeconds: number | null) => number
  ) => Effect.Effect<Recorded, OutcomesRefused>
  /** Extends the leases `relayId` still holds among `ids` to `leaseMs` from now. */
  readonly renew: (relayId: string, ids: ReadonlyArray<number>, leaseMs: number) => Effect.Effect<void>
  /** Gives back every lease of `relayId` and forgets it as a running relay (a graceful stop); how many leases. */
  readonly release: (relayId: string) => Effect.Effect<number>
  /**
   * Registers `relayId` as a running relay (PostgreSQL) and takes its lock on a connection of its
   * own, held until the scope closes or that connection is lost: while it is held, other relays
   * count its leases as live; once it is free, as expired. Succeeds with the check to run every
   * second, which fails once the connection is lost.
   */
  readonly hold: (relayId: string) => Effect.Effect<Effect.Effect<void, RelayPresenceLost>, RelayPresenceLost, Scope.Scope>
  /**
   * Deletes up to `batch` settled deliveries (their attempts with them) settled more than
   * `retentionMs` ago, the receivers whose last timeout is that old, and the relays that died
   * holding no live lease; how many deliveries.
   */
  readonly prune: (retentionMs: number, batch: number) => Effect.Effect<number>
}>()("chamber/DeliveryStore") {}
