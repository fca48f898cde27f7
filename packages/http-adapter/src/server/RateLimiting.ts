/**
 * Rate limits per key (docs/api.md "Rate limits", ruling 8): every request with a valid key is
 * checked against both rolling windows in the rate-limit store and counted when admitted; every
 * answer to it carries `RateLimit-Policy` and `RateLimit` for both windows (draft-ietf-httpapi-
 * ratelimit-headers-11, Structured Fields); a refused one is a 429 with an exact `Retry-After`.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as HttpEffect from "effect/http/HttpEffect"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { type KeyContext, noRateLimits, RateLimitStore, rateLimitKey, type Verdict, type WindowUse, wholeSeconds } from "@chamber/core"
import { TooManyRequests } from "../shared/HttpErrors.ts"
import type { RequestFacts } from "./RequestLog.ts"

/** The per-minute limit of every key: the spec's 120 unless the operator sets CHAMBER_RATE_LIMIT_PER_MINUTE. */
export const RateLimitPerMinute = Context.Reference<number>("chamber/http/RateLimitPerMinute", { defaultValue: () => 120 })

const field = (name: string, w: WindowUse) => `"${name}";r=${Math.max(0, w.limit - w.used)};t=${wholeSeconds(w.backInMs)}`

/** The two fields for a verdict, as the response carries them. */
export const rateLimitHeaders = (v: Verdict): Record<string, string> => ({
  "ratelimit-policy": `"minute";q=${v.minute.limit};w=60, "day";q=${v.day.limit};w=86400`,
  ratelimit: `${field("minute", v.minute)}, ${field("day", v.day)}`
})

/** One request counted against its key's windows: whether it is admitted, and the fields its answer carries. */
export interface Counted {
  readonly admitted: boolean
  readonly headers: Record<string, string>
}

/** A verdict as its answer carries it. */
const countedOf = (verdict: Verdict): Counted => {
  const headers = rateLimitHeaders(verdict)
  if (!verdict.admitted) headers["retry-after"] = String(Math.max(1, wholeSeconds(verdict.retryAfterMs)))
  return { admitted: verdict.admitted, headers }
}

/** Counts a key's request in its windows: the store's verdict (nothing to count with `noRateLimits`). */
const makeHit = Effect.gen(function*() {
  const store = yield* RateLimitStore
  const perMinute = yield* RateLimitPerMinute
  if (store === noRateLimits) return undefined
  return (key: KeyContext): Effect.Effect<Verdict> =>
    store.hit(rateLimitKey(key.chamber.id, key.keyId), { perMinute, daily: key.dailyLimit })
})

/** Counts requests against their keys' windows (nothing, with `noRateLimits`). */
export const makeCounter = Effect.map(makeHit, (hit) =>
  hit === undefined ? undefined : (key: KeyContext): Effect.Effect<Counted> => Effect.map(hit(key), countedOf))

/**
 * For the bearer middleware: `next` when admitted, or a 429; either way the answer gets the
 * fields, through the request's facts (server/RequestLog.ts) or, outside the front door, a
 * pre-response handler. `next` is taken here so that an admitted request goes on in the same step.
 */
export interface Limiter {
  <A, E, R>(key: KeyContext, facts: RequestFacts["Service"] | undefined, next: Effect.Effect<A, E, R>): Effect.Effect<
    A,
    E | TooManyRequests,
    R | HttpServerRequest.HttpServerRequest
  >
}

export const makeLimiter: Effect.Effect<Limiter, never, RateLimitStore> = Effect.map(makeHit, (hit): Limiter =>
  hit === undefined
    ? (_key, _facts, next) => next
    : <A, E, R>(key: KeyContext, facts: RequestFacts["Service"] | undefined, next: Effect.Effect<A, E, R>) =>
      Effect.flatMap(hit(key), (verdict) => {
        const counted = countedOf(verdict)
        const admitted: Effect.Effect<A, E | TooManyRequests, R> = counted.admitted ? next : Effect.fail(TooManyRequests.body)
        if (facts !== undefined) {
          facts.headers = counted.headers
          return admitted
        }
        return Effect.andThen(
          HttpEffect.appendPreResponseHandler((_request, response) => Effect.succeed(HttpServerResponse.setHeaders(response, counted.headers))),
          admitted
        )
      }))
