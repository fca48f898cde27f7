/**
 * The check `chamber serve` and `chamber relay` make of the stored webhook secrets before they
 * serve or deliver (docs/webhooks.md "Secrets"): a process whose keys do not open them does not
 * start (SecretKeyMismatch, naming CHAMBER_SECRET_KEY); damaged secrets are named, and it starts,
 * their subscriptions' deliveries failing alone.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { checkStoredSecrets } from "@chamber/pg-adapter"

const damagedText = (ids: ReadonlyArray<number>) =>
  `The webhook secrets of subscription${ids.length === 1 ? "" : "s"} ${ids.join(", ")} are damaged: the key that encrypted them does not ` +
  "decrypt them. Their deliveries fail, and posting their URLs again answers 503; delete them, and their owners can subscribe again " +
  "for a new secret."

/** The check, saying through `warn` which secrets are damaged. */
export const storedSecretsChecked = (warn: (text: string, message: string, fields: Record<string, unknown>) => Effect.Effect<void>) =>
  Layer.effectDiscard(Effect.flatMap(checkStoredSecrets, ({ damaged }) =>
    damaged.length === 0 ? Effect.void : warn(damagedText(damaged), "Damaged webhook secrets", { subscriptions: damaged })))
