/**
 * What an integrator asks of one subscription beside reading it (docs/webhooks.md; ruling 31):
 * recover a window of failed deliveries, ping it, rotate its secret. Their bodies and answers.
 */
import * as Schema from "effect/Schema"
import * as F from "../resource/Field.ts"

const required = { messageMissingKey: "The {field} field is required." }

/** POST .../recover: every failed delivery created from `since` (until `until`, or now) queued again. */
export const RecoverWindow = Schema.Struct({
  since: F.dateTime("2026-11-24T00:00:00Z").schema.pipe(Schema.annotateKey(required)),
  until: Schema.optionalKey(F.dateTime("2026-11-25T00:00:00Z").schema)
}).annotate({ identifier: "RecoverWindow", examples: [{ since: "2026-11-24T00:00:00.000Z", until: "2026-11-25T00:00:00.000Z" }] })
export type RecoverWindow = typeof RecoverWindow.Type

export const RecoverQueued = Schema.Struct({ queued: Schema.Int }).annotate({ identifier: "RecoverQueued", examples: [{ queued: 12 }] })

/** The longest overlap of a rotated secret: a week. */
export const MAX_PREVIOUS_EXPIRES_IN = 604_800
/** The overlap when none is asked: a day. */
export const DEFAULT_PREVIOUS_EXPIRES_IN = 86_400

/** POST .../rotate-secret: how long the old secret keeps signing beside the new one, in seconds. */
export const RotateSecret = Schema.Struct({
  previous_expires_in: Schema.optionalKey(F.integer(0, MAX_PREVIOUS_EXPIRES_IN, 3600).schema)
}).annotate({ identifier: "RotateSecret", examples: [{ previous_expires_in: 3600 }] })
export type RotateSecret = typeof RotateSecret.Type

export const RotatedSecret = Schema.Struct({
  secret: Schema.String,
  /** Until then deliveries carry the old secret's signatures too. */
  previous_expires_at: Schema.String.annotate({ format: "date-time" })
}).annotate({
  identifier: "RotatedSecret",
  examples: [{ secret: "whsec_q3Zr0Jm6bS4JHkM1l3Xv9dQn2tW8yPcE5aFgU7oLxKs=", previous_expires_at: "2026-11-25T10:00:00.000Z" }]
})
export type RotatedSecret = typeof RotatedSecret.Type

/** What one ping came to: the receiver's status and how long it took, or why it failed. */
export const PingResult = Schema.Struct({
  ok: Schema.Boolean,
  status_code: Schema.NullOr(Schema.Int),
  latency_ms: Schema.Int,
  error: Schema.NullOr(Schema.String)
}).annotate({ identifier: "PingResult", examples: [{ ok: true, status_code: 200, latency_ms: 87, error: null }] })
export type PingResult = typeof PingResult.Type

/** The body of a ping delivery, signed like any other: `data` names the subscription. */
export interface PingEvent {
  readonly id: string
  readonly type: "ping"
  readonly created_at: string
  readonly data: { readonly hook_id: number }
}
