/**
 * The Redis counts of one chamber's keys (docs/operations.md "Offboarding a chamber"): every key
 * the store keeps for an API key of the chamber carries `{<chamber public id>:<key id>}`, so they
 * are found by a pattern, whichever of its keys they belong to (rows of the keys may be gone).
 */
import * as Effect from "effect/Effect"
import { createClient } from "redis"

/** Prefix of every key the rate-limit store writes unless told otherwise. */
export const DEFAULT_KEY_PREFIX = "chamber:rl:"

export class RedisUnreachable extends Error {}

/**
 * How many Redis keys hold counts of the chamber's API keys; with `remove`, removes them too.
 * Fails with RedisUnreachable when Redis cannot be reached within `timeoutMs` (default 5 s), or
 * the whole walk over its keys takes more than a minute (a Redis that stopped answering).
 */
export const chamberCounts = (url: string, chamberId: string, options: { readonly remove: boolean; readonly prefix?: string; readonly timeoutMs?: number }) =>
  Effect.tryPromise({
    try: async (signal) => {
      const client = createClient({ url, disableOfflineQueue: true, socket: { connectTimeout: options.timeoutMs ?? 5_000, reconnectStrategy: false } })
      client.on("error", () => {})
      signal.addEventListener("abort", () => client.destroy())
      await client.connect()
      try {
        let found = 0
        for await (const keys of client.scanIterator({ MATCH: `${options.prefix ?? DEFAULT_KEY_PREFIX}{${chamberId}:*`, COUNT: 1_000 })) {
          found += keys.length
          if (options.remove && keys.length > 0) await client.unlink(keys)
        }
        return found
      } finally {
        client.destroy()
      }
    },
    catch: (error) => new RedisUnreachable(`Redis did not answer (${error instanceof Error ? error.message || error.name : String(error)})`)
  }).pipe(Effect.timeoutOrElse({
    duration: 60_000,
    orElse: () => Effect.fail(new RedisUnreachable("Redis did not answer in time"))
  }))
