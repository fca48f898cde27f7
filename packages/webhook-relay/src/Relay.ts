/**
 * A relay (docs/webhooks.md "Delivery"): claims due deliveries in batches, sends each as soon as it
 * is claimed, records outcomes in batches, and wakes on NOTIFY where the database offers it (else
 * it polls). At most `concurrency` sends at once, at most `perSubscription` of one subscription
 * (held by the claim, across relays), so one slow receiver never delays the others. Stopping waits
 * for the sends in flight (up to `stopTimeoutMs`), records them, and gives back every lease left.
 */
import { Effect, Fiber, Queue } from "effect"
import { PgClient } from "@effect/sql-pg"
import { type AttemptOutcome, type ClaimedDelivery, DeliveryStore } from "./DeliveryStore.ts"

/** The channel committed deliveries are announced on (pg-adapter OutboxSql). */
export const DELIVERIES_CHANNEL = "chamber_deliveries"

export interface RelayConfig {
  readonly relayId: string
  /** Sends in flight at most. */
  readonly concurrency: number
  /** Deliveries of one subscription leased at once at most, across relays. */
  readonly perSubscription: number
  /** How many to claim in one statement at most. */
  readonly batchSize: number
  /** How long a claim holds a delivery: longer than a send's timeout. */
  readonly leaseMs: number
  /** How often to look for due deliveries without a notification (retries fall due this way). */
  readonly pollMs: number
  /** How often outcomes are written. */
  readonly flushMs: number
  readonly stopTimeoutMs: number
  /** Whether to LISTEN for notifications (PostgreSQL); polling alone otherwise (PGlite). */
  readonly listen: boolean
  readonly retryDelayMs: (retryIndex: number, retryAfterSeconds: number | null) => number
  /** Settled deliveries older than this are pruned, in batches, every `pruneEveryMs`. */
  readonly retentionMs: number
  readonly pruneEveryMs: number
}

/** Rows one prune statement deletes at most, so it never holds long locks. */
export const PRUNE_BATCH = 1_000

/** One attempt at one delivery; never fails (a failed send is an outcome). */
export type Deliver = (delivery: ClaimedDelivery) => Effect.Effect<AttemptOutcome>

/** Runs until interrupted; then stops gracefully. */
export const runRelay = Effect.fn("Relay.run")(function*(config: RelayConfig, deliver: Deliver) {
  const store = yield* DeliveryStore
  const wake = yield* Queue.sliding<void>(1)
  const outcomes: Array<AttemptOutcome> = []
  const inflight = new Set<Fiber.Fiber<void>>()

  // Recorded outcomes free their subscriptions' places: only then is a claim worth trying again.
  const flush = Effect.suspend(() => {
    const batch = outcomes.splice(0, outcomes.length)
    return batch.length === 0 ? Effect.void : Effect.andThen(store.record(config.relayId, batch, config.retryDelayMs), Queue.offer(wake, undefined))
  })

  if (config.listen) {
    yield* Effect.gen(function*() {
      const pg = yield* PgClient.PgClient
      const notifications = yield* pg.listen(DELIVERIES_CHANNEL)
      yield* Effect.forkScoped(Effect.forever(Effect.andThen(Queue.take(notifications), Queue.offer(wake, undefined))))
    }).pipe(
      Effect.catchCause((cause) => Effect.logWarning("relay: LISTEN unavailable, polling only", cause))
    )
  }

  const send = (delivery: ClaimedDelivery) =>
    deliver(delivery).pipe(
      Effect.tap((outcome) => Effect.sync(() => outcomes.push(outcome))),
      Effect.asVoid
    )

  const loop = Effect.gen(function*() {
    while (true) {
      const room = config.concurrency - inflight.size
      const claimed = room > 0
        ? yield* store.claim({ relayId: config.relayId, limit: Math.min(room, config.batchSize), leaseMs: config.leaseMs, perSubscription: config.perSubscription })
        : []
      for (const delivery of claimed) {
        const fiber = yield* Effect.forkDetach(send(delivery))
        inflight.add(fiber)
        fiber.addObserver(() => inflight.delete(fiber))
      }
      // A full batch means more may be due at once; otherwise wait for news or the next poll.
      if (claimed.length === 0 || claimed.length < Math.min(room, config.batchSize)) {
        yield* Effect.raceFirst(Queue.take(wake), Effect.sleep(config.pollMs))
      }
    }
  })

  const recorder = Effect.forever(Effect.andThen(Effect.sleep(config.flushMs), flush))

  // Batches until a short one: the tables never grow past the retention (docs/webhooks.md "Retention").
  const pruneAll: Effect.Effect<void> = Effect.flatMap(store.prune(config.retentionMs, PRUNE_BATCH), (n) => (n === PRUNE_BATCH ? pruneAll : Effect.void))
  const pruner = Effect.forever(Effect.andThen(pruneAll, Effect.sleep(config.pruneEveryMs)))

  const stop = Effect.gen(function*() {
    yield* Effect.forEach([...inflight], Fiber.await, { concurrency: "unbounded" }).pipe(
      Effect.timeoutOrElse({ duration: config.stopTimeoutMs, orElse: () => Effect.forEach([...inflight], Fiber.interrupt) })
    )
    yield* flush
    const released = yield* store.release(config.relayId)
    yield* Effect.logInfo(`relay ${config.relayId} stopped; ${released} leases given back`)
  })

  yield* Effect.forkScoped(recorder)
  yield* Effect.forkScoped(pruner)
  return yield* loop.pipe(Effect.ensuring(stop))
}, Effect.scoped)
