/**
 * An operator's secret rotation (docs/cli.md "Webhooks", docs/admin.md): the subscription found by
 * its id alone, then rotated as its chamber's integrator would (POST /api/v1/hooks/{hook}/rotate-secret).
 */
import * as Effect from "effect/Effect"
import { Hooks, Tenants, WebhookAdmin } from "@chamber/core"

/** No subscription has that id. */
export const noHook = (id: number) => new Error(`No webhook subscription ${id}.`)

/** The new secret (shown once) and when the previous one stops signing; default overlap a day. */
export const rotateHookSecret = (hookId: number, previousExpiresIn?: number) =>
  Effect.gen(function*() {
    const hook = yield* Effect.flatMap(Effect.service(WebhookAdmin), (a) => a.hook(hookId))
    if (hook === undefined) return yield* Effect.fail(noHook(hookId))
    const tenant = yield* Effect.flatMap(Effect.service(Tenants), (t) => t.get(hook.tenant))
    const rotated = yield* Effect.flatMap(Effect.service(Hooks), (hooks) =>
      hooks.rotateSecret(tenant.id, hookId, previousExpiresIn === undefined ? {} : { previous_expires_in: previousExpiresIn }))
    return { id: hookId, url: hook.url, ...rotated }
  })
