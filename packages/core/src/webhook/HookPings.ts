/**
 * Pinging a subscription (docs/webhooks.md "Ping"; ruling 31): one `ping` event, signed with the
 * subscription's secret (and its previous one during a rotation's overlap), sent at once through
 * the HookPinger port, whether the subscription is active or not. Nothing is stored and no
 * failure is counted.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import { newEventId } from "../shared/Ids.ts"
import { WebhookSecrets } from "../shared/Ports.ts"
import type { PingResult } from "./HookActions.ts"
import { HookNotFound, type WebhookSecretUnreadable } from "./HookErrors.ts"
import { HookPinger } from "./HookPinger.ts"
import { HookRepo } from "./HookRepo.ts"

export class HookPings extends Context.Service<HookPings, {
  readonly ping: (tenantId: number, id: number) => Effect.Effect<PingResult, HookNotFound | WebhookSecretUnreadable>
}>()("chamber/HookPings") {
  static readonly layer = Layer.effect(HookPings, Effect.gen(function*() {
    const repo = yield* HookRepo
    const secrets = yield* WebhookSecrets
    const pinger = yield* HookPinger

    const ping = Effect.fn("HookPings.ping")(function*(tenantId: number, id: number) {
      const signing = yield* repo.signing(tenantId, id)
      if (signing === undefined) return yield* new HookNotFound({ id })
      const secret = secrets.open(signing.sealedSecret)
      if (Result.isFailure(secret)) return yield* secret.failure
      // A previous secret this server cannot open only loses its second signature.
      const previous = signing.sealedPrevious === null ? null : Result.getOrNull(secrets.open(signing.sealedPrevious))
      return yield* pinger.send(signing.url, secret.success, previous, {
        id: newEventId(),
        type: "ping",
        created_at: new Date().toISOString(),
        data: { hook_id: id }
      })
    })

    return HookPings.of({ ping })
  }))
}
