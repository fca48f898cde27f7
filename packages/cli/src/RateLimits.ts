/**
 * Which rate-limit store the API uses (docs/operations.md "Rate limits"): Redis when REDIS_URL is
 * set (shared by every instance), else this process's memory, saved in the database each second.
 * CHAMBER_RATE_LIMIT_PER_MINUTE raises or lowers the spec's 120 requests a minute per key.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { type Limits, RateLimitStore, savedVerdict, SavedRateLimitStore } from "@chamber/core"
import { RateLimitPerMinute } from "@chamber/http-adapter"

export interface RateLimitSettings {
  readonly perMinute: number
  readonly redisUrl: string | undefined
}

export const rateLimitSettingsFromEnv = (env: Record<string, string | undefined> = process.env): RateLimitSettings => {
  const text = env.CHAMBER_RATE_LIMIT_PER_MINUTE ?? "120"
  const perMinute = Number(text)
  if (!/^\d+$/.test(text.trim()) || perMinute < 1 || perMinute > 1_000_000_000) {
    throw new Error(`CHAMBER_RATE_LIMIT_PER_MINUTE must be a whole number from 1 to 1000000000, not "${text}".`)
  }
  return { perMinute, redisUrl: env.REDIS_URL || undefined }
}

/** Where the counts live, for people: never the Redis password. */
export const describeStore = (settings: RateLimitSettings): string => {
  if (settings.redisUrl === undefined) return "in this process"
  try {
    const url = new URL(settings.redisUrl)
    return `Redis at ${url.host}`
  } catch {
    return "Redis"
  }
}

/** The Redis store at `url`, connected while the layer lives. */
export const redisStore = (url: string) =>
  Layer.unwrap(Effect.promise(async () => (await import("@chamber/redis-adapter")).RedisRateLimitStore({ url })))

/** The store and the per-minute limit the HTTP layer reads. */
export const rateLimitsLayer = (settings: RateLimitSettings) =>
  Layer.merge(
    settings.redisUrl === undefined ? SavedRateLimitStore : redisStore(settings.redisUrl),
    Layer.succeed(RateLimitPerMinute)(settings.perMinute)
  )

/**
 * The windows of one key as the store holds them, counting nothing: the saved in-process windows,
 * or Redis's, through the store already connected (the TUI's) or a connection for this read.
 */
export const usageOf = (settings: RateLimitSettings, key: string, limits: Limits) => {
  const redisUrl = settings.redisUrl
  if (redisUrl === undefined) return savedVerdict(key, limits)
  const peek = Effect.flatMap(Effect.service(RateLimitStore), (store) => store.peek(key, limits))
  return Effect.flatMap(Effect.serviceOption(RateLimitStore), (store) =>
    Option.isSome(store) ? store.value.peek(key, limits) : peek.pipe(Effect.provide(redisStore(redisUrl))))
}
