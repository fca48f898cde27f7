/**
 * The rate-limit store shared by every API instance (docs/operations.md "Rate limits"): one
 * atomic script per request (windows.lua), three Redis keys per API key that expire a day and a
 * minute after its last admitted request. Judged by the Redis server's clock, so instances with
 * skewed clocks still count one window. When Redis does not answer, this instance limits on its
 * own (fail open, per instance) and says so once per outage; it goes back to Redis by itself.
 */
import { readFileSync } from "node:fs"
import { createHash } from "node:crypto"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import { DEFAULT_KEY_PREFIX } from "./ChamberCounts.ts"
import { type Limits, makeMemoryStore, RateLimitStore, type Verdict } from "@chamber/core"
import { makeRedisConnection } from "./RedisConnection.ts"

const SCRIPT = readFileSync(new URL("./windows.lua", import.meta.url), "utf8")
const SHA = createHash("sha1").update(SCRIPT).digest("hex")

export interface RedisStoreOptions {
  readonly url: string
  /** Whose clock judges the windows: Redis's own (production), or the Effect clock the store is made with (tests). */
  readonly clock?: "redis" | "caller"
  /** How long one check may take before this instance limits on its own; default 250 ms. */
  readonly timeoutMs?: number
  /** Prefix of every Redis key; default `chamber:rl:`. */
  readonly prefix?: string
  /** Limit on this instance alone while Redis does not answer (default); false: die instead (tests that must reach Redis). */
  readonly failOpen?: boolean
}

type Reply = [number, number, number, number, number, number]

/** The script's six integers; anything else (a reply out of step with its command) is Redis not answering. */
const isReply = (reply: unknown): reply is Reply =>
  Array.isArray(reply) && reply.length === 6 && reply.every((n) => typeof n === "number" && Number.isFinite(n))

const toVerdict = (reply: Reply, limits: Limits): Verdict => ({
  admitted: reply[0] === 1,
  minute: { limit: limits.perMinute, used: reply[1], backInMs: reply[2] },
  day: { limit: limits.daily, used: reply[3], backInMs: reply[4] },
  retryAfterMs: reply[5]
})

/** Checks Redis did not answer in time (docs/operations.md "Metrics"): each limited on this instance instead. */
const redisErrors = Metric.counter("chamber_redis_errors_total", {
  description: "Rate-limit checks Redis did not answer in time; each was limited on this instance alone.",
  incremental: true
})

export const makeRedisStore = Effect.fn("RedisRateLimitStore.make")(function*(options: RedisStoreOptions) {
  const prefix = options.prefix ?? DEFAULT_KEY_PREFIX
  const timeoutMs = options.timeoutMs ?? 250
  const timeout = Duration.millis(timeoutMs)
  // A connection that answers nothing for a second (four timeouts at least) is given up for a new one.
  const connection = yield* makeRedisConnection({ url: options.url, stuckAfterMs: Math.max(1_000, 4 * timeoutMs) })

  const fallback = (yield* makeMemoryStore()).store
  const clock = yield* Effect.service(Clock.Clock)
  let down: string | undefined

  const run = (key: string, limits: Limits, mode: "hit" | "peek") =>
    Effect.gen(function*() {
      const now = options.clock === "caller" ? String(clock.currentTimeMillisUnsafe()) : ""
      const keys = [`${prefix}{${key}}:m`, `${prefix}{${key}}:d`, `${prefix}{${key}}:h`]
      const args = [now, String(limits.perMinute), String(limits.daily), mode]
      const call = (command: "EVALSHA" | "EVAL", body: string) => connection.send<unknown>([command, body, "3", ...keys, ...args])
      const reply: unknown = yield* Effect.tryPromise({
        try: () =>
          call("EVALSHA", SHA).catch((error: unknown) =>
            error instanceof Error && error.message.startsWith("NOSCRIPT") ? call("EVAL", SCRIPT) : Promise.reject(error)
          ),
        catch: (error) => error
      })
      return isReply(reply) ? toVerdict(reply, limits) : yield* Effect.fail(new Error("Redis answered the check with something else"))
    }).pipe(
      Effect.timeout(timeout),
      Effect.tap(() => {
        if (down === undefined) return Effect.void
        down = undefined
        return Effect.logInfo("rate limits: Redis answers again; limits are shared by every instance again")
      }),
      Effect.catch((error) => {
        redisErrors.updateUnsafe(1, Context.empty())
        connection.replaceIfStuck()
        if (options.failOpen === false) return Effect.die(error)
        const local = mode === "hit" ? fallback.hit(key, limits) : fallback.peek(key, limits)
        if (down !== undefined) return local
        down = error instanceof Error ? error.message || error.name : String(error)
        return Effect.andThen(
          Effect.logWarning(`rate limits: Redis does not answer (${down}); each instance limits on its own until it does`),
          local
        )
      })
    )

  return RateLimitStore.of({
    hit: (key, limits) => run(key, limits, "hit"),
    peek: (key, limits) => run(key, limits, "peek")
  })
})

export const RedisRateLimitStore = (options: RedisStoreOptions) => Layer.effect(RateLimitStore, makeRedisStore(options))
