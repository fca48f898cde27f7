/**
 * Webhook subscription use cases (docs/webhooks.md "Subscriptions"): list without secrets,
 * create or update in place by URL (ruling 22) returning the secret, delete. A re-posted URL
 * whose stored secret the server cannot decrypt changes nothing and is WebhookSecretUnreadable.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import { Transactor, WebhookSecrets } from "../shared/Ports.ts"
import type { Hook, HookCreate, HookWithSecret } from "./Hook.ts"
import { HookNotFound, type WebhookSecretUnreadable } from "./HookErrors.ts"
import { HookRepo } from "./HookRepo.ts"

export class Hooks extends Context.Service<Hooks, {
  readonly list: (tenantId: number) => Effect.Effect<ReadonlyArray<Hook>>
  /** A new subscription, or the existing one of that URL updated; its secret either way. */
  readonly create: (tenantId: number, input: HookCreate) => Effect.Effect<HookWithSecret & { readonly created: boolean }, WebhookSecretUnreadable>
  readonly delete: (tenantId: number, id: number) => Effect.Effect<{ readonly deleted: true }, HookNotFound>
}>()("chamber/Hooks") {
  static readonly layer = Layer.effect(Hooks, Effect.gen(function*() {
    const repo = yield* HookRepo
    const secrets = yield* WebhookSecrets
    const tx = yield* Transactor

    const list = Effect.fn("Hooks.list")(function*(tenantId: number) {
      return yield* repo.list(tenantId)
    })

    const create = Effect.fn("Hooks.create")(function*(tenantId: number, input: HookCreate) {
      const events = [...new Set(input.events)]
      return yield* tx.withTransaction(Effect.gen(function*() {
        const { hook, sealedSecret, created } = yield* repo.upsert(tenantId, input.url, events, secrets.seal(secrets.generate()))
        // An existing secret that cannot be read rolls the update back: a re-post answers it or changes nothing.
        const secret = secrets.open(sealedSecret)
        if (Result.isFailure(secret)) return yield* secret.failure
        return { ...hook, secret: secret.success, created }
      }))
    })

    const delete_ = Effect.fn("Hooks.delete")(function*(tenantId: number, id: number) {
      if (!(yield* repo.delete(tenantId, id))) return yield* new HookNotFound({ id })
      return { deleted: true as const }
    })

    return Hooks.of({ list, create, delete: delete_ })
  }))
}
