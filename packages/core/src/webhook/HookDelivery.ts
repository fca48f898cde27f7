/**
 * A subscription's deliveries as its integrator sees them (docs/webhooks.md "Deliveries";
 * ruling 31): resource envelopes whose attributes are the event, the delivery's state and every
 * attempt made, oldest first.
 */
import * as Schema from "effect/Schema"
import { ListOf } from "../Pagination.ts"
import * as F from "../resource/Field.ts"

export const DeliveryStatuses = ["pending", "succeeded", "failed"] as const
export type DeliveryStatus = typeof DeliveryStatuses[number]

const DateTime = Schema.String.annotate({ format: "date-time" })

export const HookDeliveryAttempt = Schema.Struct({
  attempted_at: DateTime,
  /** The receiver's answer; null when none arrived (refused, timed out, connection failed). */
  status_code: Schema.NullOr(Schema.Int),
  latency_ms: Schema.Int,
  error: Schema.NullOr(Schema.String),
  /** The first 1 KiB of the answer's body. */
  response_excerpt: Schema.NullOr(Schema.String)
}).annotate({ identifier: "HookDeliveryAttempt" })
export type HookDeliveryAttempt = typeof HookDeliveryAttempt.Type

const failedAttempt = {
  attempted_at: "2026-11-24T10:40:30.000Z",
  status_code: 500,
  latency_ms: 212,
  error: "The destination answered 500.",
  response_excerpt: "upstream unavailable"
}

export const HookDelivery = Schema.Struct({
  id: Schema.Int,
  attributes: Schema.Struct({
    event_id: Schema.String,
    type: Schema.String,
    status: F.oneOf(DeliveryStatuses, "failed").schema,
    attempt_count: Schema.Int,
    /** When the next attempt is due while pending; null once settled. */
    next_attempt_at: Schema.NullOr(DateTime),
    attempts: Schema.Array(HookDeliveryAttempt)
  }),
  created_at: Schema.NullOr(DateTime),
  updated_at: Schema.NullOr(DateTime)
}).annotate({
  identifier: "HookDelivery",
  examples: [{
    id: 981,
    attributes: {
      event_id: "evt_3kT9vQ2mXw7LpR4sN8yB1cZd",
      type: "member.created",
      status: "pending",
      attempt_count: 1,
      next_attempt_at: "2026-11-24T10:41:30.000Z",
      attempts: [failedAttempt]
    },
    created_at: "2026-11-24T10:40:29.000Z",
    updated_at: "2026-11-24T10:40:30.000Z"
  }]
})
export type HookDelivery = typeof HookDelivery.Type

export const HookDeliveryList = ListOf(HookDelivery).annotate({
  identifier: "HookDeliveryList",
  examples: [{
    data: [{
      id: 981,
      attributes: { event_id: "evt_3kT9vQ2mXw7LpR4sN8yB1cZd", type: "member.created", status: "failed", attempt_count: 4, next_attempt_at: null, attempts: [failedAttempt] },
      created_at: "2026-11-24T10:40:29.000Z",
      updated_at: "2026-11-24T17:12:02.000Z"
    }],
    meta: { current_page: 1, per_page: 100, total: 1, last_page: 1 }
  }]
})
