/**
 * Rate limits per key (docs/api.md "Rate limits", ruling 8): every request with a valid key is
 * checked against both rolling windows in the rate-limit store and counted when admitted; every
 * answer to it carries `RateLimit-Policy` and `RateLimit` for both windows (draft-ietf-httpapi-
 * ratelimit-headers-11, Structured Fields); a refused one is a 429 with an exact `Retry-After`.
 */
import { Context, Effect } from "effect"
import { HttpEffect, HttpServerResponse } from "effect/http"
import { type KeyContext, noRateLimits, RateLimitStore, rateLimitKey, type Verdict, type WindowUse, wholeSeconds } from "@chamber/core"
import { TooManyRequests } from "../shared/HttpErrors.ts"

/** The per-minute limit of every key: the spec's 120 unless the operator sets CHAMBER_RATE_LIMIT_PER_MINUTE. */
export const RateLimitPerMinute = Context.Reference<number>("chamber/http/RateLimitPerMinute", { defaultValue: () => 120 })

const field = (name: string, w: WindowUse) => `"${name}";r=${Math.max(0, w.limit - w.used)};t=${wholeSeconds(w.backInMs)}`

/** The two fields for a verdict, as the response carries them. */
export const rateLimitHeaders = (v: Verdict): Record<string, string> => ({
  "ratelimit-policy": `"minute";q=${v.minute.limit};w=60, "day";q=${v.day.limit};w=86400`,
  ratelimit: `${field("minute", v.minute)}, ${field("day", v.day)}`
})

/** Counts a request against its key's windows: admitted, or a 429; either way the answer gets the fields. */
export const makeLimiter = Effect.gen(function*() {
  const store = yield* RateLimitStore
  const perMinute = yield* RateLimitPerMinute
  if (store === noRateLimits) return (_key: KeyContext) => Effect.void
  return (key: KeyContext) => limitRequest(store, perMinute, key)
})

const limitRequest = Effect.fnUntraced(function*(store: RateLimitStore["Service"], perMinute: number, key: KeyContext) {
  const verdict = yield* store.hit(rateLimitKey(key.chamber.id, key.keyId), { perMinute, daily: key.dailyLimit })
  const headers = rateLimitHeaders(verdict)
  if (!verdict.admitted) headers["retry-after"] = String(Math.max(1, wholeSeconds(verdict.retryAfterMs)))
  yield* HttpEffect.appendPreResponseHandler((_request, response) => Effect.succeed(HttpServerResponse.setHeaders(response, headers)))
  if (!verdict.admitted) return yield* Effect.fail(TooManyRequests.body)
})
