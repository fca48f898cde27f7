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
import { type KeyContext, Keys, noRateLimits, RateLimitStore, rateLimitKey, type Verdict, type WindowUse, wholeSeconds } from "@chamber/core"
import { TooManyRequests } from "../shared/HttpErrors.ts"
import { soleBearer } from "./RawRequest.ts"
import type { RequestFacts } from "./RequestLog.ts"
import { countRateLimited } from "./RequestMetrics.ts"

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
  if (!verdict.admitted) {
    headers["retry-after"] = String(Math.max(1, wholeSeconds(verdict.retryAfterMs)))
    countRateLimited(verdict.day.used >= verdict.day.limit ? "day" : "minute")
  }
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

/**
 * For the bearer middleware: succeeds when the key's request is admitted, or fails with the 429;
 * either way the answer gets the fields, through the request's facts (server/RequestLog.ts) or,
 * without them (a server without the request log), a pre-response handler.
 */
export type Limiter = (key: KeyContext, facts: RequestFacts["Service"] | undefined) => Effect.Effect<
  void,
  TooManyRequests,
  HttpServerRequest.HttpServerRequest
>

export const makeLimiter: Effect.Effect<Limiter, never, RateLimitStore> = Effect.map(makeHit, (hit): Limiter =>
  hit === undefined
    ? () => Effect.void
    : (key, facts) =>
      Effect.flatMap(hit(key), (verdict) => {
        const counted = countedOf(verdict)
        const admitted = counted.admitted ? Effect.void : Effect.fail(TooManyRequests.body)
        if (facts !== undefined) {
          facts.headers = counted.headers
          return admitted
        }
        return Effect.andThen(
          HttpEffect.appendPreResponseHandler((_request, response) => Effect.succeed(HttpServerResponse.setHeaders(response, counted.headers))),
          admitted
        )
      }))

/**
 * What answers given before any endpoint is reached pass through (an unknown `/api/v1` path, a
 * known one with another method, a body over 1 MiB, server/JsonErrors.ts): sent with a valid
 * key, they count against it and carry its rate-limit fields like every other answer to it; a
 * key over its limit gets the 429 instead (docs/api.md "Rate limits", ruling 8).
 */
export type LimiterBeforeRouting = (
  request: HttpServerRequest.HttpServerRequest,
  response: HttpServerResponse.HttpServerResponse
) => Effect.Effect<HttpServerResponse.HttpServerResponse>

export const makeLimiterBeforeRouting: Effect.Effect<LimiterBeforeRouting, never, RateLimitStore | Keys> = Effect.gen(function*() {
  const keys = yield* Keys
  const hit = yield* makeHit
  if (hit === undefined) return (_request, response) => Effect.succeed(response)
  // Made once: a generator function made per request keeps what it captures, the answer
  // included, until a full collection (bench/README.md "Where the members page's time goes").
  const limited = Effect.fnUntraced(function*(credential: string, response: HttpServerResponse.HttpServerResponse) {
    const key = yield* keys.authenticate(credential)
    if (key === undefined) return response
    const counted = countedOf(yield* hit(key))
    return counted.admitted
      ? HttpServerResponse.setHeaders(response, counted.headers)
      : HttpServerResponse.jsonUnsafe({ message: TooManyRequests.body.message }, { status: 429, headers: counted.headers })
  })
  return (request, response) => {
    const credential = soleBearer(request)
    return credential === undefined || !request.url.startsWith("/api/v1/") ? Effect.succeed(response) : limited(credential, response)
  }
})
