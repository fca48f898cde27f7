/**
 * Answers given before any endpoint is reached: an unknown `/api/v1` path, a known one with
 * another method, a body over 1 MiB. Sent with a valid key, they count against it and carry its
 * rate-limit fields like every other answer to it; a key over its limit gets the 429 instead
 * (docs/api.md "Rate limits", ruling 8).
 */
import * as Effect from "effect/Effect"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { Keys } from "@chamber/core"
import { makeCounter } from "./RateLimiting.ts"
import { soleBearer } from "./RawRequest.ts"

export type Outside = (
  request: HttpServerRequest.HttpServerRequest,
  response: HttpServerResponse.HttpServerResponse
) => Effect.Effect<HttpServerResponse.HttpServerResponse>

export const makeOutsideCounting = Effect.gen(function*() {
  const keys = yield* Keys
  const count = yield* makeCounter
  const outside: Outside = (request, response) => {
    const credential = soleBearer(request)
    if (count === undefined || credential === undefined || !request.url.startsWith("/api/v1/")) {
      return Effect.succeed(response)
    }
    return Effect.gen(function*() {
      const key = yield* keys.authenticate(credential)
      if (key === undefined) return response
      const counted = yield* count(key)
      return counted.admitted
        ? HttpServerResponse.setHeaders(response, counted.headers)
        : HttpServerResponse.jsonUnsafe({ message: "Too many requests." }, { status: 429, headers: counted.headers })
    })
  }
  return outside
})
