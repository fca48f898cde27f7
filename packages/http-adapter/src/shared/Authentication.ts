/**
 * Bearer authentication and scope checks, before anything else about the request is read:
 * a bad key is a 401 even when the body is bad too; a missing scope is a 403 before any 422.
 * Each endpoint names its scope with the `RequiredScope` annotation.
 */
import { Context, Effect, Layer, Redacted } from "effect"
import { HttpApiMiddleware, HttpApiSecurity } from "effect/http-api"
import { ApiKeyRepo, type KeyContext, Keys } from "@chamber/core"
import { Forbidden, Unauthenticated } from "./HttpErrors.ts"

/** The key a request authenticated with. */
export class CurrentKey extends Context.Service<CurrentKey, KeyContext>()("chamber/http/CurrentKey") {}

/** The scope an endpoint requires; endpoints without it need only a valid key (`/me`). */
export class RequiredScope extends Context.Service<RequiredScope, string>()("chamber/http/RequiredScope") {}

export class Authentication extends HttpApiMiddleware.Service<Authentication, { provides: CurrentKey }>()(
  "chamber/http/Authentication",
  { security: { bearer: HttpApiSecurity.bearer }, error: [Unauthenticated, Forbidden], requiredForClient: true }
) {}

const TOUCH_EVERY_MS = 60_000

export const AuthenticationLive = Layer.effect(Authentication, Effect.gen(function*() {
  const keys = yield* Keys
  const repo = yield* ApiKeyRepo
  // last_used_at is written at most once a minute per key and per process, off the request path.
  const touched = new Map<number, number>()
  const touch = (key: KeyContext) => {
    const now = Date.now()
    if (now - (touched.get(key.keyId) ?? 0) < TOUCH_EVERY_MS) return Effect.void
    touched.set(key.keyId, now)
    return Effect.forkDetach(repo.touch(key.keyId)).pipe(Effect.asVoid)
  }
  return Authentication.of({
    bearer: (httpEffect, { credential, endpoint }) =>
      Effect.gen(function*() {
        const key = yield* keys.authenticate(Redacted.value(credential))
        if (key === undefined) return yield* Effect.fail(Unauthenticated.body)
        yield* touch(key)
        const scope = Context.getOrUndefined(endpoint.annotations, RequiredScope)
        if (scope !== undefined && !key.scopes.includes(scope)) return yield* Effect.fail(Forbidden.lacking(scope))
        return yield* Effect.provideService(httpEffect, CurrentKey, key)
      })
  })
}))
