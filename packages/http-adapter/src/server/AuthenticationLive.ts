/**
 * Bearer authentication and the access check, before anything else about the request is read:
 * a bad key is a 401 even when the body is bad too; a missing scope is a 403 before any 422
 * (docs/api.md "Authentication and scopes"). An endpoint that states no access is refused (fail
 * closed). A JSON body that is not UTF-8 is refused here too, once the key may send it. A valid
 * key's request is counted against its rate limits (server/RateLimiting.ts) before its scope is checked.
 * A POST or PATCH with a well-formed Idempotency-Key claims it in the statement that finds the
 * key, and lets go of the claim when the rate limits or the scope refuse it; the `Idempotent`
 * middleware inside this one then runs the request under it (server/Idempotency.ts).
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import { ApiKeyRepo, type KeyContext } from "@chamber/core"
import { Authentication, CurrentKey, missingScope, RequiredAccess } from "../shared/Access.ts"
import { Forbidden, Unauthenticated } from "../shared/HttpErrors.ts"
import { makeIdempotency, type Pending, PendingClaim } from "./Idempotency.ts"
import { authorizationHeaders } from "./RawRequest.ts"
import { makeLimiter } from "./RateLimiting.ts"
import { RequestFacts } from "./RequestLog.ts"

const TOUCH_EVERY_MS = 60_000

const undeclared = new Forbidden({ message: "This endpoint states no scope, so no key may call it." })

export const AuthenticationLive = Layer.effect(Authentication, Effect.gen(function*() {
  const repo = yield* ApiKeyRepo
  const limitRequest = yield* makeLimiter
  const idempotency = yield* makeIdempotency
  // last_used_at is written at most once a minute per key and per process, off the request path.
  const touched = new Map<number, number>()
  /** Whether the key's last_used_at is due to be written (`touch`). */
  const touchDue = (key: KeyContext) => {
    const now = Date.now()
    if (now - (touched.get(key.keyId) ?? 0) < TOUCH_EVERY_MS) return false
    touched.set(key.keyId, now)
    return true
  }
  const touch = (key: KeyContext) => Effect.forkDetach(repo.touch(key.keyId))
  return Authentication.of({
    // The framework hands over the credential of the first Authorization header, or "" when it
    // has none in the bearer scheme; `authenticate` finds no key for "" without a query. What
    // the request holds (its headers, its facts) is read from its context at once; a touch not
    // due is no step at all. The steps are one chain, not a generator: nothing that runs after the
    // handler may hold on to its answer (bench/README.md "Memory").
    bearer: (httpEffect, { credential, endpoint }) =>
      Effect.withFiber((fiber) => {
        const request = Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)
        const facts = Context.getOrUndefined(fiber.context, RequestFacts)
        const authorized = ({ key, pending }: { readonly key: KeyContext; readonly pending: Pending | undefined }) => {
          if (facts !== undefined) facts.keyPrefix = key.prefix
          const allowed = idempotency.admit(
            pending,
            Effect.flatMap(limitRequest(key, facts), () => {
              const access = Context.getOrUndefined(endpoint.annotations, RequiredAccess)
              if (access === undefined) return Effect.fail(undeclared)
              const missing = missingScope(access, key.scopes)
              return missing === undefined ? Effect.void : Effect.fail(Forbidden.lacking(missing))
            })
          )
          // Both services in one step of the context.
          const withKey = Effect.updateContext(httpEffect, (context: Context.Context<Exclude<Effect.Services<typeof httpEffect>, CurrentKey>>) =>
            Context.add(Context.add(context, CurrentKey, key), PendingClaim, pending))
          const run = Effect.andThen(allowed, withKey)
          return touchDue(key) ? Effect.andThen(touch(key), run) : run
        }
        type Authorized = ReturnType<typeof authorized>
        // Two keys are no key: which one would count?
        return authorizationHeaders(request) > 1
          ? Effect.fail(Unauthenticated.body)
          : Effect.flatMap(
            idempotency.authenticate(request, Redacted.value(credential)),
            (found): Effect.Effect<Effect.Success<Authorized>, Effect.Error<Authorized> | Unauthenticated, Effect.Services<Authorized>> =>
              found === undefined ? Effect.fail(Unauthenticated.body) : authorized(found)
          )
      })
  })
}))
