/**
 * A relay as part of an application (docs/webhooks.md "Delivery"): each claimed delivery signed
 * (both signatures, the attempt's own timestamp) and sent with the configured timeout and
 * destination guard; the relay loop runs in the background for as long as the layer lives and
 * stops gracefully with it.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import { randomBytes } from "node:crypto"
import { hostname } from "node:os"
import type { AttemptOutcome, ClaimedDelivery, WebhookSecretUnreadable } from "@chamber/core"
import { attemptKind, countAttempt } from "./DeliveryMetrics.ts"
import { type Deliver, type RelayConfig, runRelay } from "./Relay.ts"
import { nextAttemptDelay } from "./Schedule.ts"
import { type ExtraCa, sendEffect } from "./Sender.ts"
import { makePreviousSecrets, type PreviousSecretOf } from "./PreviousSecrets.ts"
import { DEFAULT_LEASE_MS, type DeliverySettings, perChamberOf } from "./Settings.ts"
import { deliveryBody, deliveryHeaders } from "./Signature.ts"

/**
 * One attempt: the body serialized once, so the bytes signed are the bytes sent; signed with the
 * claimed secret and, during a rotation's overlap, the previous one (`previousOf`,
 * PreviousSecrets.ts). A delivery whose secret this relay cannot decrypt is not sent: its attempt
 * fails with the reason.
 */
export const deliverWith = (settings: DeliverySettings, ca?: ExtraCa, previousOf: PreviousSecretOf = () => Effect.succeed(null)): Deliver =>
(delivery: ClaimedDelivery) =>
  Effect.suspend(() => {
    if (Result.isFailure(delivery.secret)) {
      const attemptedAt = new Date()
      countAttempt("failed", 0, delivery.event.created_at, attemptedAt.getTime())
      return Effect.succeed(unsigned(delivery, attemptedAt, delivery.secret.failure))
    }
    const secret = delivery.secret.success
    return Effect.flatMap(previousOf(delivery.hookId, secret), (previous) => attempt(settings, ca, delivery, secret, previous))
  })

/** One attempt signed with `secret`, and `previous` beside it during a rotation's overlap. */
const attempt = (settings: DeliverySettings, ca: ExtraCa | undefined, delivery: ClaimedDelivery, secret: string, previous: string | null) =>
  Effect.suspend(() => {
    const attemptedAt = new Date()
    const body = deliveryBody(delivery.event)
    return sendEffect({
      url: delivery.url,
      headers: deliveryHeaders(delivery.event, secret, body, attemptedAt, previous),
      body,
      timeoutMs: settings.timeoutMs,
      allowPrivate: settings.allowPrivate,
      ca
    }).pipe(Effect.map((r): AttemptOutcome => {
      countAttempt(attemptKind(r.ok, r.failure), r.latencyMs, delivery.event.created_at, attemptedAt.getTime() + r.latencyMs)
      return {
        delivery,
        attemptedAt,
        ok: r.ok,
        status: r.status,
        latencyMs: r.latencyMs,
        responseExcerpt: r.responseExcerpt,
        error: r.error,
        retryAfterSeconds: r.retryAfterSeconds,
        timedOut: r.failure === "timeout"
      }
    }))
  })

const unsigned = (delivery: ClaimedDelivery, attemptedAt: Date, why: WebhookSecretUnreadable): AttemptOutcome => ({
  delivery,
  attemptedAt,
  ok: false,
  status: null,
  latencyMs: 0,
  responseExcerpt: null,
  error: `Not sent: ${why.message}`,
  retryAfterSeconds: null
})

export interface RelayOptions {
  readonly settings: DeliverySettings
  /** LISTEN for new deliveries (PostgreSQL); PGlite relays poll. */
  readonly listen: boolean
  readonly concurrency?: number
  readonly perSubscription?: number
  /** Whether the relay holds a lock others see it alive by (default: `listen`, i.e. on PostgreSQL). */
  readonly presence?: boolean
  readonly pollMs?: number
  readonly stopTimeoutMs?: number
  readonly ca?: ExtraCa
}

/**
 * The loop's settings: leases of CHAMBER_WEBHOOK_LEASE (renewed while held), retries following
 * CHAMBER_WEBHOOK_RETRY_DELAYS, a chamber's share of the sends from CHAMBER_WEBHOOK_CHAMBER_SHARE.
 */
export const relayConfig = (options: RelayOptions): RelayConfig => {
  const concurrency = options.concurrency ?? 128
  return {
    relayId: `${hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`,
    concurrency,
    perSubscription: options.perSubscription ?? 4,
    perChamber: perChamberOf(concurrency, options.settings.chamberShare),
    batchSize: 100,
    leaseMs: options.settings.leaseMs ?? DEFAULT_LEASE_MS,
    pollMs: options.pollMs ?? 1_000,
    flushMs: 10,
    stopTimeoutMs: options.stopTimeoutMs ?? options.settings.timeoutMs + 1_000,
    listen: options.listen,
    presence: options.presence ?? options.listen,
    retryDelayMs: (retryIndex, retryAfterSeconds) => nextAttemptDelay(retryIndex, { retryAfterSeconds, delaysMs: options.settings.retryDelaysMs }),
    retentionMs: options.settings.retentionMs,
    pruneEveryMs: 10 * 60_000
  }
}

/**
 * A relay running in the background of the application; needs the storage layer (its PgClient)
 * and the delivery store (pg-adapter `DeliveryStoreSql`, provided where the relay is composed,
 * so that it opens secrets with the relay's WebhookSecrets).
 */
export const RelayLive = (options: RelayOptions) => {
  const config = relayConfig(options)
  return Layer.effectDiscard(Effect.gen(function*() {
    const previousOf = yield* makePreviousSecrets
    return yield* Effect.forkScoped(runRelay(config, deliverWith(options.settings, options.ca, previousOf)))
  }))
}
