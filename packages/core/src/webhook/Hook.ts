/**
 * Webhook subscriptions (docs/webhooks.md "Subscriptions"): flat objects, not resource envelopes.
 * A subscription names an https URL and the event kinds it receives; its secret is shown when it
 * is created (or posted again) and never listed.
 */
import * as Schema from "effect/Schema"
import { EventKinds } from "../outbox/Outbox.ts"
import * as F from "../resource/Field.ts"
import { resourceScopes } from "../resource/ResourceScopes.ts"
import { HookUrl } from "./HookUrl.ts"

export const HookScopes = resourceScopes("hooks", ["write"])

export { MAX_HOOK_URL } from "./HookUrl.ts"

const Kinds = Schema.Array(F.oneOf(EventKinds, "member.created", "event kind").schema).annotate({ message: "The {field} field must be an array." }).check(
  Schema.makeFilter((xs: ReadonlyArray<unknown>) => xs.length >= 1, {
    message: "The {field} field must have at least 1 item.",
    toJsonSchema: () => ({ minItems: 1 })
  })
)

const required = { messageMissingKey: "The {field} field is required." }

/** POST /api/v1/hooks: an https URL (at most 500 characters) and at least one known event kind. */
export const HookCreate = Schema.Struct({
  url: HookUrl.pipe(Schema.annotateKey(required)),
  events: Kinds.pipe(Schema.annotateKey(required))
}).annotate({ identifier: "HookCreate", examples: [{ url: "https://hooks.example.com/chamber", events: ["member.created", "invoice.paid"] }] })
export type HookCreate = typeof HookCreate.Type

/** The subscription every example shows. */
const example = { id: 3, url: "https://hooks.example.com/chamber", events: ["member.created"], active: true, created_at: "2026-11-22T15:04:05.000Z" }

export const Hook = Schema.Struct({
  id: Schema.Int,
  url: Schema.String,
  events: Schema.Array(Schema.String),
  active: Schema.Boolean,
  created_at: Schema.NullOr(Schema.String.annotate({ format: "date-time" }))
}).annotate({
  identifier: "Hook",
  examples: [example]
})
export type Hook = typeof Hook.Type

/** The create response: the subscription and its signing secret. */
export const HookWithSecret = Schema.Struct({ ...Hook.fields, secret: Schema.String }).annotate({
  identifier: "HookWithSecret",
  examples: [{ ...example, secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw5dL4Y6sZtQ0=" }]
})
export type HookWithSecret = typeof HookWithSecret.Type

/** Consecutive failed deliveries that make a subscription inactive (spec section 6.2). */
export const DEACTIVATE_AFTER = 20
/** From this many consecutive failures on, a subscription is shown as about to be deactivated (docs/admin.md). */
export const DEACTIVATION_WARNING_AT = 15

/** How many more failed deliveries an active subscription survives; 0 once inactive. */
export const failuresBeforeDeactivation = (active: boolean, consecutiveFailures: number): number =>
  active ? Math.max(0, DEACTIVATE_AFTER - consecutiveFailures) : 0

const DateTimeOrNull = Schema.NullOr(Schema.String.annotate({ format: "date-time" }))

/** GET /api/v1/hooks/{hook}: the subscription as listed, with its delivery health (ruling 31). */
export const HookHealth = Schema.Struct({
  ...Hook.fields,
  consecutive_failures: Schema.Int,
  last_success_at: DateTimeOrNull,
  last_failure_at: DateTimeOrNull,
  failures_before_deactivation: Schema.Int
}).annotate({
  identifier: "HookHealth",
  examples: [{
    ...example,
    consecutive_failures: 2,
    last_success_at: "2026-11-24T09:12:00.000Z",
    last_failure_at: "2026-11-24T10:40:31.000Z",
    failures_before_deactivation: 18
  }]
})
export type HookHealth = typeof HookHealth.Type
