/** What can go wrong with webhook subscriptions, as domain facts. */
import * as Schema from "effect/Schema"

export class HookNotFound extends Schema.TaggedError<HookNotFound>()("HookNotFound", { id: Schema.Number }) {
  readonly kind = "NotFound" as const
  override get message() {
    return `No webhook subscription ${this.id} in this chamber.`
  }
}

export class HookDeliveryNotFound extends Schema.TaggedError<HookDeliveryNotFound>()("HookDeliveryNotFound", { id: Schema.Number }) {
  readonly kind = "NotFound" as const
  override get message() {
    return `No delivery ${this.id} of this webhook subscription.`
  }
}

/**
 * A subscription URL whose host is a literal loopback, private or other non-public address: a 422
 * on `url` (ruling 31), unless CHAMBER_WEBHOOK_ALLOW_PRIVATE=true.
 */
export class HookDestinationRefused extends Schema.TaggedError<HookDestinationRefused>()("HookDestinationRefused", { reason: Schema.String }) {
  readonly kind = "Invalid" as const
  override get message() {
    return `The url field must not name a ${this.reason} address: webhook destinations must be public.`
  }
  get errors() {
    return { url: [this.message] }
  }
}

/** Why the server's keys do not open a stored signing secret (docs/webhooks.md "Secrets"). */
export const SecretUnreadableReasons = ["no-key", "other-key", "damaged", "undecryptable"] as const
export type SecretUnreadableReason = typeof SecretUnreadableReasons[number]

const REASONS: Record<SecretUnreadableReason, string> = {
  "no-key": "it is encrypted, but CHAMBER_SECRET_KEY is not set",
  "other-key": "it is encrypted with another key than CHAMBER_SECRET_KEY (or CHAMBER_SECRET_KEY_PREVIOUS)",
  "damaged": "it is damaged: the key that encrypted it does not decrypt it",
  "undecryptable": "CHAMBER_SECRET_KEY (or CHAMBER_SECRET_KEY_PREVIOUS) does not decrypt it: it was encrypted with another key, or is damaged"
}

/**
 * A subscription's stored signing secret that this server cannot decrypt: it can neither show
 * it nor sign with it until its operator restores the key (a 503, nothing changed).
 */
export class WebhookSecretUnreadable extends Schema.TaggedError<WebhookSecretUnreadable>()("WebhookSecretUnreadable", {
  reason: Schema.Literals(SecretUnreadableReasons)
}) {
  readonly kind = "Unavailable" as const
  override get message() {
    return `This webhook subscription's signing secret cannot be read: ${REASONS[this.reason]}. ` +
      "Its operator must restore the key; or delete the subscription and post its URL again for a new secret."
  }
}
