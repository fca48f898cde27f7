/**
 * Webhook subscription use cases (docs/webhooks.md "Subscriptions"): list without secrets,
 * create or update in place by URL (ruling 22) returning the secret, delete; one subscription
 * with its health, its deliveries, replay and recovery of deliveries, and secret rotation
 * (ruling 31). A re-posted URL whose stored secret the server cannot decrypt changes nothing and
 * is WebhookSecretUnreadable. A URL naming a literal non-public address is refused
 * (AllowPrivateDestinations lifts that for loopback and private addresses only).
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import type { Page } from "../Pagination.ts"
import { Transactor, WebhookSecrets } from "../shared/Ports.ts"
import { literalHostRefusal } from "./AddressRanges.ts"
import { failuresBeforeDeactivation, type Hook, type HookCreate, type HookHealth, type HookWithSecret } from "./Hook.ts"
import { DEFAULT_PREVIOUS_EXPIRES_IN, type RecoverWindow, type RotatedSecret, type RotateSecret } from "./HookActions.ts"
import type { DeliveryStatus, HookDelivery } from "./HookDelivery.ts"
import { HookDeliveryNotFound, HookDestinationRefused, HookNotFound, type WebhookSecretUnreadable } from "./HookErrors.ts"
import { AllowPrivateDestinations } from "./HookPinger.ts"
import { HookDeliveryRepo, HookRepo } from "./HookRepo.ts"

export class Hooks extends Context.Service<Hooks, {
  readonly list: (tenantId: number) => Effect.Effect<ReadonlyArray<Hook>>
  /** A new subscription, or the existing one of that URL updated; its secret either way. */
  readonly create: (
    tenantId: number,
    input: HookCreate
  ) => Effect.Effect<HookWithSecret & { readonly created: boolean }, WebhookSecretUnreadable | HookDestinationRefused>
  readonly delete: (tenantId: number, id: number) => Effect.Effect<{ readonly deleted: true }, HookNotFound>
  readonly get: (tenantId: number, id: number) => Effect.Effect<HookHealth, HookNotFound>
  readonly deliveries: (tenantId: number, id: number, status: DeliveryStatus | undefined, page: number) => Effect.Effect<Page<HookDelivery>, HookNotFound>
  readonly replay: (tenantId: number, id: number, deliveryId: number) => Effect.Effect<HookDelivery, HookNotFound | HookDeliveryNotFound>
  readonly recover: (tenantId: number, id: number, window: RecoverWindow) => Effect.Effect<{ readonly queued: number }, HookNotFound>
  readonly rotateSecret: (tenantId: number, id: number, input: RotateSecret) => Effect.Effect<RotatedSecret, HookNotFound>
}>()("chamber/Hooks") {
  static readonly layer = Layer.effect(Hooks, Effect.gen(function*() {
    const repo = yield* HookRepo
    const deliveryRepo = yield* HookDeliveryRepo
    const secrets = yield* WebhookSecrets
    const tx = yield* Transactor

    const list = Effect.fn("Hooks.list")(function*(tenantId: number) {
      return yield* repo.list(tenantId)
    })

    const create = Effect.fn("Hooks.create")(function*(tenantId: number, input: HookCreate) {
      const refusal = literalHostRefusal(new URL(input.url).hostname, yield* AllowPrivateDestinations)
      if (refusal !== undefined) return yield* new HookDestinationRefused({ reason: refusal })
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

    const get = Effect.fn("Hooks.get")(function*(tenantId: number, id: number) {
      const found = yield* repo.counts(tenantId, id)
      if (found === undefined) return yield* new HookNotFound({ id })
      const { failure_count, last_success_at, last_failure_at, ...hook } = found
      return {
        ...hook,
        consecutive_failures: failure_count,
        last_success_at,
        last_failure_at,
        failures_before_deactivation: failuresBeforeDeactivation(hook.active, failure_count)
      }
    })

    const exists = (tenantId: number, id: number) =>
      Effect.flatMap(repo.counts(tenantId, id), (found) => (found === undefined ? Effect.fail(new HookNotFound({ id })) : Effect.void))

    const deliveries = Effect.fn("Hooks.deliveries")(function*(tenantId: number, id: number, status: DeliveryStatus | undefined, page: number) {
      yield* exists(tenantId, id)
      return yield* deliveryRepo.page(tenantId, id, status, page)
    })

    const replay = Effect.fn("Hooks.replay")(function*(tenantId: number, id: number, deliveryId: number) {
      yield* exists(tenantId, id)
      const replayed = yield* deliveryRepo.replay(tenantId, id, deliveryId)
      if (replayed === undefined) return yield* new HookDeliveryNotFound({ id: deliveryId })
      return replayed
    })

    const recover = Effect.fn("Hooks.recover")(function*(tenantId: number, id: number, window: RecoverWindow) {
      yield* exists(tenantId, id)
      return { queued: yield* deliveryRepo.recover(tenantId, id, window.since, window.until) }
    })

    const rotateSecret = Effect.fn("Hooks.rotateSecret")(function*(tenantId: number, id: number, input: RotateSecret) {
      const secret = secrets.generate()
      const previousExpiresAt = yield* repo.rotate(tenantId, id, secrets.seal(secret), input.previous_expires_in ?? DEFAULT_PREVIOUS_EXPIRES_IN)
      if (previousExpiresAt === undefined) return yield* new HookNotFound({ id })
      return { secret, previous_expires_at: previousExpiresAt }
    })

    return Hooks.of({ list, create, delete: delete_, get, deliveries, replay, recover, rotateSecret })
  }))
}
