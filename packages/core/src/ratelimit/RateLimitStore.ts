/**
 * Where the request counts of API keys live (docs/operations.md "Rate limits"): one port, two
 * adapters. In-process here (one instance, the embedded default), its windows saved each second
 * so a restart goes on counting and `chamber key usage` can read them; Redis in redis-adapter
 * (shared by every instance). Both run the algorithm of RollingWindows.ts and pass one contract suite.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { type Bucket, DAY_MS, KeyWindows, type Limits, type Verdict } from "./RollingWindows.ts"

export class RateLimitStore extends Context.Service<RateLimitStore, {
  /** Checks a request of `key` against both windows and counts it when admitted, atomically. */
  readonly hit: (key: string, limits: Limits) => Effect.Effect<Verdict>
  /** The windows of `key` as they stand, counting nothing. */
  readonly peek: (key: string, limits: Limits) => Effect.Effect<Verdict>
}>()("chamber/RateLimitStore") {}

/**
 * Whose counts these are: the chamber's public id (random, so databases sharing one Redis never
 * share a key's counts) and the key's id.
 */
export const rateLimitKey = (chamberId: string, keyId: number): string => `${chamberId}:${keyId}`

/** The saved day of one key (what an in-process store keeps across a restart). */
export interface SavedWindows {
  readonly key: string
  readonly buckets: ReadonlyArray<Bucket>
}

/** Storage port for the in-process store's saved windows. */
export class RateLimitSnapshots extends Context.Service<RateLimitSnapshots, {
  /** Replaces the saved windows of these keys; forgets every key with nothing left in its day. */
  readonly save: (windows: ReadonlyArray<SavedWindows>, now: number) => Effect.Effect<void>
  /** The saved windows of `key`, or of every key. */
  readonly load: (key?: string) => Effect.Effect<ReadonlyArray<SavedWindows>>
}>()("chamber/RateLimitSnapshots") {}

/** How often the in-process store forgets keys with nothing left in either window. */
const SWEEP_EVERY_MS = 10 * 60_000

/**
 * The windows of every key in this process's memory, judged by the clock it was made with. `saved` are
 * windows to go on from (restored at a key's first request, when its limit is known); `changed`
 * collects the keys counted since it was last emptied.
 */
export const makeMemoryStore = (saved: ReadonlyArray<SavedWindows> = [], changed?: Set<string>) =>
  Effect.map(Effect.service(Clock.Clock), (clock) => {
    const keys = new Map<string, KeyWindows>()
    const pending = new Map(saved.map((s) => [s.key, s.buckets]))
    let swept = 0
    const sweep = (now: number) => {
      if (now - swept < SWEEP_EVERY_MS) return
      swept = now
      for (const [key, windows] of keys) if (windows.idle(now)) keys.delete(key)
    }
    const windowsOf = (key: string, limits: Limits) => {
      let windows = keys.get(key)
      if (windows === undefined) {
        const buckets = pending.get(key)
        pending.delete(key)
        windows = buckets === undefined ? new KeyWindows() : KeyWindows.restore(buckets, limits.perMinute)
        keys.set(key, windows)
      }
      return windows
    }
    return {
      store: RateLimitStore.of({
        hit: (key, limits) =>
          Effect.sync(() => {
            const now = clock.currentTimeMillisUnsafe()
            sweep(now)
            const verdict = windowsOf(key, limits).hit(now, limits)
            if (verdict.admitted) changed?.add(key)
            return verdict
          }),
        peek: (key, limits) => Effect.sync(() => windowsOf(key, limits).peek(clock.currentTimeMillisUnsafe(), limits))
      }),
      saved: (key: string): SavedWindows => ({ key, buckets: keys.get(key)?.saved() ?? [] })
    }
  })

const unlimited = (limits: Limits): Verdict => ({
  admitted: true,
  minute: { limit: limits.perMinute, used: 0, backInMs: 0 },
  day: { limit: limits.daily, used: 0, backInMs: 0 },
  retryAfterMs: 0
})

/**
 * No limits at all: the HTTP layer then neither counts nor sends the fields. Only for an embedder
 * that says so (a trusted internal caller) and for the bench's measure of what limiting costs.
 */
export const noRateLimits = RateLimitStore.of({
  hit: (_key, limits) => Effect.succeed(unlimited(limits)),
  peek: (_key, limits) => Effect.succeed(unlimited(limits))
})
export const NoRateLimits = Layer.succeed(RateLimitStore)(noRateLimits)

/** In memory only: tests, and embedders that need nothing kept. */
export const MemoryRateLimitStore = Layer.effect(RateLimitStore, Effect.map(makeMemoryStore(), (m) => m.store))

/** How often the in-process store saves the windows that changed. */
export const SAVE_EVERY_MS = 1_000

/**
 * In memory, saved through RateLimitSnapshots every second and when the layer closes, and
 * restored from there at start: a restart goes on counting where the last process stopped.
 */
export const SavedRateLimitStore = Layer.effect(RateLimitStore, Effect.gen(function*() {
  const snapshots = yield* RateLimitSnapshots
  const changed = new Set<string>()
  const memory = yield* makeMemoryStore(yield* snapshots.load(), changed)
  // A save that fails (the database away) is tried again with the next one, said once; limiting goes on meanwhile.
  let failing = false
  const save = Effect.gen(function*() {
    if (changed.size === 0) return
    const keys = [...changed]
    changed.clear()
    yield* snapshots.save(keys.map(memory.saved), yield* Clock.currentTimeMillis).pipe(
      Effect.tap(() => Effect.sync(() => (failing = false))),
      Effect.catchCause((cause) => {
        keys.forEach((k) => changed.add(k))
        if (failing) return Effect.void
        failing = true
        return Effect.logWarning("rate limits: the counts could not be saved; trying again each second", cause)
      })
    )
  })
  yield* Effect.forkScoped(Effect.forever(Effect.andThen(Effect.sleep(SAVE_EVERY_MS), save)))
  yield* Effect.addFinalizer(() => save)
  return memory.store
}))

/** The windows of `key` as the last save left them (what `chamber key usage` shows with the in-process store). */
export const savedVerdict = Effect.fn("RateLimits.savedVerdict")(function*(key: string, limits: Limits) {
  const snapshots = yield* RateLimitSnapshots
  const [saved] = yield* snapshots.load(key)
  const now = yield* Clock.currentTimeMillis
  return KeyWindows.restore(saved?.buckets ?? [], limits.perMinute).peek(now, limits)
})

/** Saved windows with nothing left in their day. */
export const expiredBefore = (now: number) => now - DAY_MS - 60_000
