/**
 * `chamber secrets rekey` (docs/webhooks.md "Rotating CHAMBER_SECRET_KEY"): every value sealed
 * with CHAMBER_SECRET_KEY re-encrypted under it, opened with it or CHAMBER_SECRET_KEY_PREVIOUS:
 * the subscriptions' secrets (and a rotated secret's previous one), then the kept
 * Idempotency-Key answers that hold one. Each in pages of their own transactions, so it runs
 * beside serving processes; run again, it finishes what an interrupted run left.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { type KeptAnswersRekeyed, rekeyKeptAnswers } from "./KeptAnswersRekeySql.ts"
import { secretKeysConfig, webhookSecrets } from "./WebhookSecretsNode.ts"
import { rekeySubscriptionSecrets } from "./WebhookSecretsSql.ts"

/** `chamber secrets rekey` without the key to encrypt with. */
export class NoSecretKey extends Schema.TaggedError<NoSecretKey>()("NoSecretKey", {}) {
  override get message() {
    return "CHAMBER_SECRET_KEY is not set: set it to the key to encrypt the webhook secrets with, " +
      "and CHAMBER_SECRET_KEY_PREVIOUS to the key they are encrypted with now."
  }
}

/** What rekey did, by kind of sealed value (the subscriptions' secrets at the top level, as before). */
export interface SecretsRekeyed {
  readonly rekeyed: number
  readonly unchanged: number
  readonly damaged: ReadonlyArray<number>
  readonly previous_secrets: { readonly rekeyed: number; readonly unchanged: number; readonly dropped: number }
  readonly kept_answers: KeptAnswersRekeyed
}

/**
 * Refuses, changing nothing, without CHAMBER_SECRET_KEY (NoSecretKey) or when a subscription's
 * secret is sealed with neither key (SecretKeyMismatch).
 */
export const rekeyStoredSecrets = Effect.gen(function*() {
  const keys = yield* Effect.orDie(secretKeysConfig)
  const current = keys.current ?? ""
  if (current === "") return yield* new NoSecretKey()
  const secrets = webhookSecrets(keys)
  const subscriptions = yield* rekeySubscriptionSecrets(secrets, current)
  const answers = yield* rekeyKeptAnswers(secrets, current)
  return {
    rekeyed: subscriptions.rekeyed,
    unchanged: subscriptions.unchanged,
    damaged: subscriptions.damaged,
    previous_secrets: subscriptions.previous,
    kept_answers: answers
  } satisfies SecretsRekeyed
}).pipe(Effect.catchTag("SqlError", Effect.die))
