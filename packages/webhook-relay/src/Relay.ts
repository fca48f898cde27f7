/**
 * A relay (docs/webhooks.md "Delivery"): claims due deliveries in batches, sends each as soon as it
 * is claimed, records outcomes in batches, claims again once a batch is recorded if the last claim
 * left deliveries for want of room or places, and wakes on NOTIFY where the database offers it
 * (else it polls). At most `concurrency` sends at once, at
 * most `perChamber` of one chamber (the claim takes chambers in turn), at most `perSubscription`
 * of one subscription and one at a time to a receiver that keeps timing out (held by the claim,
 * across relays), so one slow receiver, or one chamber's, never delays the others. A claim or a write costs the database about as much for one
 * delivery as for a batch, so while sends are in flight both wait up to `flushMs` for half a
 * batch's worth (room to claim into, outcomes to write). A claim's lease is short and renewed
 * while the relay holds the delivery, so a relay that dies holds nothing for long; on PostgreSQL
 * (`presence`) it also holds a lock while it runs, whose release on its death lets the other
 * relays take its deliveries at once (core DeliveryStore, pg-adapter DeliveryStoreSql.ts). Stopping waits
 * for the sends in flight (up to `stopTimeoutMs`), records them, and gives back every lease left.
 * A claim, a write, a renewal or LISTEN that fails is logged once and tried again, and its
 * recovery logged; the relay keeps running. The outcome of a delivery deleted meanwhile is
 * dropped; one the database refuses is dropped alone, never holding up the others.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as Semaphore from "effect/Semaphore"
import { PgClient } from "@effect/sql-pg"
import { type AttemptOutcome, type ClaimedDelivery, DeliveryStore, type OutcomesRefused } from "@chamber/core"
import { makeStreak } from "./Streak.ts"

/** The channel committed deliveries are announced on (pg-adapter OutboxSql). */
export const DELIVERIES_CHANNEL = "chamber_deliveries"

export interface RelayConfig {
  readonly relayId: string
  /** Sends in flight at most. */
  readonly concurrency: number
  /** Deliveries of one subscription leased at once at most, across relays. */
  readonly perSubscription: number
  /** Sends of one chamber in flight at most, in this relay. */
  readonly perChamber: number
  /** How many to claim in one statement at most. */
  readonly batchSize: number
  /** How long a claim holds a delivery unless renewed; renewed every quarter of it while held. */
  readonly leaseMs: number
  /** How often to look for due deliveries without a notification (retries fall due this way). */
  readonly pollMs: number
  /** The longest an outcome waits for others to be written with it while sends are in flight. */
  readonly flushMs: number
  readonly stopTimeoutMs: number
  /** Whether to LISTEN for notifications (PostgreSQL); polling alone otherwise (PGlite). */
  readonly listen: boolean
  /** Whether to hold a lock while running, so that others know at once when this relay dies (PostgreSQL); leases alone otherwise. */
  readonly presence?: boolean | undefined
  readonly retryDelayMs: (retryIndex: number, retryAfterSeconds: number | null) => number
  /** Settled deliveries older than this are pruned, in batches, every `pruneEveryMs`. */
  readonly retentionMs: number
  readonly pruneEveryMs: number
}

/** How long to wait before listening again when LISTEN failed or its connection was lost. */
export const RELISTEN_MS = 1_000

/** How often a relay checks the connection that holds its lock. */
export const PRESENCE_CHECK_MS = 1_000

/** Rows one prune statement deletes at most, so it never holds long locks. */
export const PRUNE_BATCH = 1_000

/** One attempt at one delivery; never fails (a failed send is an outcome). */
export type Deliver = (delivery: ClaimedDelivery) => Effect.Effect<AttemptOutcome>

/** Runs until interrupted; then stops gracefully. */
export const runRelay = Effect.fn("Relay.run")(function*(config: RelayConfig, deliver: Deliver) {
  const store = yield* DeliveryStore
  const wake = yield* Queue.sliding<void>(1)
  const ready = yield* Queue.sliding<void>(1)
  const outcomes: Array<AttemptOutcome> = []
  const inflight = new Set<Fiber.Fiber<void>>()
  /** Deliveries leased here whose outcome is neither written nor dropped yet: their leases are renewed. */
  const held = new Set<number>()
  /** Sends whose outcome is not in yet. */
  let sending = 0
  /** The same, by chamber. */
  const sendingByChamber = new Map<number, number>()
  const countSending = (tenantId: number, by: number) => {
    const n = (sendingByChamber.get(tenantId) ?? 0) + by
    if (n === 0) sendingByChamber.delete(tenantId)
    else sendingByChamber.set(tenantId, n)
  }
  const batch = Math.min(config.batchSize, config.concurrency)
  const halfBatch = Math.max(1, Math.floor(batch / 2))
  // One batch written at a time: stopping gives its leases back only after the last one is written.
  const writing = yield* Semaphore.make(1)
  const writes = makeStreak("relay: recording outcomes failed; keeping them and trying again", "relay: recording outcomes again")
  const claims = makeStreak("relay: claiming failed; trying again at each poll", "relay: claiming again")
  const renewals = makeStreak("relay: renewing leases failed; trying again", "relay: renewing leases again")
  const presences = makeStreak(
    "relay: not holding its lock (it failed, or its connection was lost): others may take its deliveries; it claims nothing until the lock is held again",
    "relay: holding its lock again"
  )
  const listens = makeStreak(
    "relay: not listening for notifications (LISTEN failed or its connection was lost); polling until it works again",
    "relay: listening for notifications again"
  )

  /**
   * Whether a written batch is a reason to claim again: the last claim left due deliveries for
   * want of room or of their subscriptions' places, which the batch may have freed, or the batch
   * settled a delivery that a later one of its subscription and resource waited for. Otherwise
   * the last claim took all there was, and only news (or the next poll) brings more.
   */
  let more = true

  /** Written or dropped: no longer held, so no longer renewed. */
  const letGo = (done: ReadonlyArray<AttemptOutcome>) => Effect.sync(() => done.forEach((o) => held.delete(o.delivery.id)))

  // The outcomes left to try again: those the database did not answer for. Written ones free
  // their places; those of deliveries gone are dropped; a batch the database refuses is written
  // one outcome at a time. An outcome refused alone is written once more (a deletion that
  // committed while the first try ran is then seen, and the outcome dropped as gone); refused
  // again, it is dropped (its lease then runs out and the delivery is attempted again).
  const write = (written: ReadonlyArray<AttemptOutcome>, again = false): Effect.Effect<ReadonlyArray<AttemptOutcome>> =>
    store.record(config.relayId, written, config.retryDelayMs).pipe(
      Effect.tap(({ freed }) => Effect.andThen(letGo(written), Effect.sync(() => void (more ||= freed)))),
      Effect.tap(({ vanished }) =>
        vanished.length === 0 ? Effect.void : Effect.logInfo(
          vanished.length === 1
            ? `relay: dropped the outcome of delivery ${vanished[0]}: it no longer exists (its subscription was deleted)`
            : `relay: dropped the outcomes of deliveries ${vanished.join(", ")}: they no longer exist (their subscriptions were deleted)`
        )),
      Effect.as<ReadonlyArray<AttemptOutcome>>([]),
      Effect.catchTag("OutcomesRefused", (refusal) =>
        written.length > 1 ? oneByOne(written) : again ? drop(written[0]!, refusal) : write(written, true)),
      Effect.catchDefect((defect) => Effect.as(writes.failed(defect), written))
    )
  const drop = (outcome: AttemptOutcome, refusal: OutcomesRefused) =>
    Effect.andThen(
      letGo([outcome]),
      Effect.as(Effect.logWarning(`relay: dropped the outcome of delivery ${outcome.delivery.id}: ${refusal.message}`), [])
    )
  const oneByOne = Effect.fnUntraced(function*(written: ReadonlyArray<AttemptOutcome>) {
    for (let i = 0; i < written.length; i++) {
      const left = yield* write([written[i]!])
      // The database stopped answering: the rest waits with it.
      if (left.length > 0) return [...left, ...written.slice(i + 1)]
    }
    return []
  })

  // Whether everything gathered was written; what was not is kept (its leases still renewed, so
  // nothing is sent again meanwhile while the database answers) for the next try.
  const flush = writing.withPermit(Effect.suspend(() => {
    const gathered = outcomes.splice(0, outcomes.length)
    if (gathered.length === 0) return Effect.succeed(true)
    return Effect.flatMap(write(gathered), (left) => {
      if (left.length > 0) {
        outcomes.unshift(...left)
        return Effect.succeed(false)
      }
      return writes.succeeded.pipe(
        Effect.andThen(Effect.suspend(() => (more ? Queue.offer(wake, undefined) : Effect.void))),
        Effect.as(true)
      )
    })
  }))

  // LISTEN on a connection of its own, again whenever that connection is lost (the database
  // restarted, failed over, or the network dropped); each time it is back, the relay looks at once
  // for what committed while nothing listened.
  if (config.listen) {
    const pg = yield* PgClient.PgClient
    const listening = Effect.scoped(Effect.gen(function*() {
      const notifications = yield* pg.listen(DELIVERIES_CHANNEL)
      yield* listens.succeeded
      yield* Queue.offer(wake, undefined)
      return yield* Effect.forever(Effect.andThen(Queue.take(notifications), Queue.offer(wake, undefined)))
    }))
    yield* Effect.forkScoped(Effect.forever(listening.pipe(
      Effect.catchCause((cause) => listens.failed(cause)),
      Effect.andThen(Effect.sleep(RELISTEN_MS))
    )))
  }

  // The lock, on a connection of its own, taken again whenever that connection is lost (checked
  // every second); the first claim waits for it, since a relay without it claims nothing. Held
  // again, the relay looks at once for what was due meanwhile (a wake-up it had then claimed nothing).
  if (config.presence === true) {
    const held = yield* Deferred.make<void>()
    const holding = Effect.scoped(Effect.gen(function*() {
      const check = yield* store.hold(config.relayId)
      yield* presences.succeeded
      yield* Deferred.succeed(held, undefined)
      yield* Queue.offer(wake, undefined)
      return yield* Effect.forever(Effect.andThen(Effect.sleep(PRESENCE_CHECK_MS), check))
    }))
    yield* Effect.forkScoped(Effect.forever(holding.pipe(
      Effect.catchCause((cause) => presences.failed(cause)),
      Effect.andThen(Effect.sleep(RELISTEN_MS))
    )))
    yield* Deferred.await(held)
  }

  const send = (delivery: ClaimedDelivery) =>
    deliver(delivery).pipe(
      Effect.flatMap((outcome) =>
        Effect.andThen(
          Effect.sync(() => {
            sending--
            countSending(delivery.tenantId, -1)
            outcomes.push(outcome)
          }),
          Queue.offer(ready, undefined)
        )
      ),
      Effect.asVoid
    )

  const claim = (limit: number) =>
    store.claim({
      relayId: config.relayId,
      limit,
      leaseMs: config.leaseMs,
      perSubscription: config.perSubscription,
      perChamber: config.perChamber,
      sending: sendingByChamber
    }).pipe(
      Effect.tap((claimed) => Effect.andThen(Effect.sync(() => claimed.deliveries.forEach((d) => held.add(d.id))), claims.succeeded)),
      Effect.catchDefect((defect) => Effect.as(claims.failed(defect), { deliveries: [], capped: false }))
    )

  const room = () => Math.min(config.concurrency - inflight.size, batch)
  const loop = Effect.gen(function*() {
    while (true) {
      // Little room and sends in flight: they get flushMs to make more before the claim.
      if (room() > 0 && room() < halfBatch && inflight.size > 0) yield* Effect.sleep(config.flushMs)
      const limit = room()
      const { deliveries: claimed, capped } = limit > 0 ? yield* claim(limit) : { deliveries: [], capped: true }
      more = capped || claimed.length === limit
      for (const delivery of claimed) {
        sending++
        countSending(delivery.tenantId, 1)
        const fiber = yield* Effect.forkDetach(send(delivery))
        inflight.add(fiber)
        fiber.addObserver(() => inflight.delete(fiber))
      }
      // A full batch means more may be due at once; otherwise wait for news or the next poll.
      if (limit === 0 || claimed.length < limit) yield* Effect.raceFirst(Queue.take(wake), Effect.sleep(config.pollMs))
    }
  })

  // Outcomes that arrive while a batch is being written make the next batch.
  const gather = Effect.gen(function*() {
    const since = Date.now()
    while (outcomes.length < halfBatch && sending > 0) {
      const left = config.flushMs - (Date.now() - since)
      if (left <= 0) return
      yield* Effect.raceFirst(Queue.take(ready), Effect.sleep(left))
    }
  })
  // A batch that could not be written is tried again a poll later.
  const recorder = Effect.forever(Effect.gen(function*() {
    yield* Queue.take(ready)
    yield* gather
    if (!(yield* flush)) yield* Effect.andThen(Effect.sleep(config.pollMs), Queue.offer(ready, undefined))
  }))

  // Every quarter of a lease, the leases of what is held are extended: other relays take a
  // delivery only once the relay holding it has stopped renewing (died, or lost the database).
  const renewer = Effect.forever(Effect.andThen(
    Effect.sleep(Math.max(1, Math.floor(config.leaseMs / 4))),
    Effect.suspend(() =>
      held.size === 0 ? Effect.void : store.renew(config.relayId, [...held], config.leaseMs).pipe(
        Effect.andThen(renewals.succeeded),
        Effect.catchDefect(renewals.failed)
      )
    )
  ))

  // Batches until a short one: the tables never grow past the retention (docs/webhooks.md "Retention").
  const pruneAll: Effect.Effect<void> = Effect.flatMap(store.prune(config.retentionMs, PRUNE_BATCH), (n) => (n === PRUNE_BATCH ? pruneAll : Effect.void))
  const pruner = Effect.forever(Effect.andThen(
    pruneAll.pipe(Effect.catchDefect((defect) => Effect.logWarning("relay: pruning failed; trying again later", defect))),
    Effect.sleep(config.pruneEveryMs)
  ))

  const stop = Effect.gen(function*() {
    yield* Effect.forEach([...inflight], Fiber.await, { concurrency: "unbounded" }).pipe(
      Effect.timeoutOrElse({ duration: config.stopTimeoutMs, orElse: () => Effect.forEach([...inflight], Fiber.interrupt) })
    )
    yield* flush
    const released = yield* store.release(config.relayId)
    yield* Effect.logInfo(`relay ${config.relayId} stopped; ${released} leases given back`)
  })

  yield* Effect.forkScoped(recorder)
  yield* Effect.forkScoped(renewer)
  yield* Effect.forkScoped(pruner)
  return yield* loop.pipe(Effect.ensuring(stop))
}, Effect.scoped)
