/**
 * Bearer authentication and the access check, before anything else about the request is read:
 * a bad key is a 401 even when the body is bad too; a missing scope is a 403 before any 422
 * (docs/api.md "Authentication and scopes"). An endpoint that states no access is refused (fail
 * closed). A JSON body that is not UTF-8 is refused here too, once the key may send it. A valid
 * key's request is counted against its rate limits (server/RateLimiting.ts) before its scope is checked.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import type * as Types from "effect/Types"
import { ApiKeyRepo, type KeyContext, Keys } from "@chamber/core"
import { AnyValidKey, Authentication, CurrentKey, RequiredAccess } from "../shared/Access.ts"
import { Forbidden, type TooManyRequests, Unauthenticated, type ValidationError } from "../shared/HttpErrors.ts"
import { requireUtf8Body, soleBearer } from "./RawRequest.ts"
import { makeLimiter } from "./RateLimiting.ts"
import { RequestFacts } from "./RequestLog.ts"

const TOUCH_EVERY_MS = 60_000

const undeclared = new Forbidden({ message: "This endpoint states no scope, so no key may call it." })

export const AuthenticationLive = Layer.effect(Authentication, Effect.gen(function*() {
  const keys = yield* Keys
  const repo = yield* ApiKeyRepo
  const limitRequest = yield* makeLimiter
  // last_used_at is written at most once a minute per key and per process, off the request path.
  const touched = new Map<number, number>()
  const touch = (key: KeyContext) => {
    const now = Date.now()
    if (now - (touched.get(key.keyId) ?? 0) < TOUCH_EVERY_MS) return Effect.void
    touched.set(key.keyId, now)
    return Effect.forkDetach(repo.touch(key.keyId)).pipe(Effect.asVoid)
  }
  // Applied once per endpoint at start: the endpoint's access is read then, not per request.
  return Authentication.of((httpEffect, { endpoint }) => {
    const access = Context.getOrUndefined(endpoint.annotations, RequiredAccess)
    type Answer = Effect.Effect<
      HttpServerResponse.HttpServerResponse,
      Unauthenticated | TooManyRequests | Forbidden | ValidationError | Types.unhandled,
      HttpServerRequest.HttpServerRequest
    >
    const admit = (key: KeyContext, request: HttpServerRequest.HttpServerRequest): Answer => {
      if (access === undefined) return Effect.fail(undeclared)
      if (access !== AnyValidKey && !key.scopes.includes(access)) return Effect.fail(Forbidden.lacking(access))
      return then(requireUtf8Body(request), Effect.provideService(httpEffect, CurrentKey, key))
    }
    return Effect.withFiber((fiber): Answer => {
      const request = Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)
      const facts = Context.getOrUndefined(fiber.context, RequestFacts)
      // No bearer, or two keys, is no key: `authenticate` finds none for "" without a query.
      return Effect.flatMap(keys.authenticate(soleBearer(request) ?? ""), (key): Answer => {
        if (key === undefined) return Effect.fail(Unauthenticated.body)
        if (facts !== undefined) facts.keyPrefix = key.prefix
        return then(touch(key), limitRequest(key, facts, admit(key, request)))
      })
    })
  })
}))

/** `first` then `next`, without a step for a `first` that does nothing (most requests' touch and body check). */
const then = <E1, R1, A, E2, R2>(first: Effect.Effect<void, E1, R1>, next: Effect.Effect<A, E2, R2>): Effect.Effect<A, E1 | E2, R1 | R2> =>
  first === Effect.void ? next : Effect.andThen(first, next)
