/** The webhook subscription endpoints (docs/webhooks.md "Subscriptions"): the contract only. */
import * as Schema from "effect/Schema"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import {
  DeliveryStatuses,
  Field,
  Hook,
  HookCreate,
  HookDelivery,
  HookDeliveryList,
  HookHealth,
  HookWithSecret,
  PingResult,
  RecoverQueued,
  RecoverWindow,
  RotatedSecret,
  RotateSecret
} from "@chamber/core"
import { Authentication, Idempotent } from "../shared/Access.ts"
import { NotFoundError, ServiceUnavailable, ValidationError } from "../shared/HttpErrors.ts"
import { operation } from "../shared/Operation.ts"
import { PageQuery, RowId } from "../shared/Params.ts"
import { single } from "../shared/Responses.ts"

export const HookList = Schema.Struct({ data: Schema.Array(Hook) }).annotate({
  identifier: "HookList",
  examples: [{
    data: [
      { id: 3, url: "https://hooks.example.com/chamber", events: ["member.created", "invoice.paid"], active: true, created_at: "2026-11-22T15:04:05.000Z" },
      { id: 4, url: "https://crm.example.net/chamber-events", events: ["contact.created"], active: false, created_at: "2026-11-23T08:00:00.000Z" }
    ]
  }]
})
export const HookDeleted = Schema.Struct({ deleted: Schema.Literal(true) }).annotate({ identifier: "HookDeleted", examples: [{ deleted: true }] })

export const HookHealthResponse = single(HookHealth)
export const HookDeliveryResponse = single(HookDelivery)
export const RecoverResponse = single(RecoverQueued)
export const PingResponse = single(PingResult)
export const RotatedSecretResponse = single(RotatedSecret)

export class HooksGroup extends HttpApiGroup.make("hooks")
  .add(
    HttpApiEndpoint.get("list", "/", { success: HookList }).pipe(operation({
      access: "hooks:write",
      summary: "List webhook subscriptions",
      description: "Every subscription of the chamber, made by a person or through the API, in one response (no paging, no `meta`); never their secrets."
    })),
    HttpApiEndpoint.post("create", "/", {
      payload: HookCreate,
      success: HookWithSecret.pipe(HttpApiSchema.status(201)),
      error: [ValidationError, ServiceUnavailable]
    }).pipe(operation({
      access: "hooks:write",
      summary: "Subscribe a URL to events",
      description:
        "`url`: https only, at most 500 characters; `events`: at least one event kind. Answers 201 with the subscription and " +
        "its signing `secret`. A URL whose host is a literal loopback, private, link-local, CGNAT, multicast or unspecified " +
        "address is a 422 on `url`. A URL the chamber already subscribed is updated in place: its event list replaced, active " +
        "again, its failure count reset, and its existing secret returned. A 503 when the server cannot decrypt that stored " +
        "secret (its operator's key is wrong, or the secret is damaged): nothing is changed."
    })),
    HttpApiEndpoint.get("get", "/:hook", {
      params: { hook: RowId },
      success: HookHealthResponse,
      error: NotFoundError
    }).pipe(operation({
      access: "hooks:write",
      summary: "One webhook subscription with its health",
      description:
        "The subscription as listed, plus `consecutive_failures` (failed deliveries since the last success), `last_success_at`, " +
        "`last_failure_at` and `failures_before_deactivation` (20 less the consecutive failures while active; 0 once inactive)."
    })),
    HttpApiEndpoint.get("deliveries", "/:hook/deliveries", {
      params: { hook: RowId },
      query: { status: Schema.optionalKey(Field.oneOf(DeliveryStatuses, "failed").schema), page: PageQuery },
      success: HookDeliveryList,
      error: [NotFoundError, ValidationError]
    }).pipe(operation({
      access: "hooks:write",
      summary: "A subscription's deliveries with their attempts",
      description:
        "100 a page, newest first, optionally of one `status` (pending, succeeded, failed). Each delivery names its event " +
        "(`event_id`, `type`), its state, when its next attempt is due while pending, and every attempt made: when, the " +
        "receiver's `status_code`, `latency_ms`, the `error` and the first 1 KiB of the answer (`response_excerpt`)."
    })),
    HttpApiEndpoint.post("replay", "/:hook/deliveries/:delivery/replay", {
      params: { hook: RowId, delivery: RowId },
      success: HookDeliveryResponse.pipe(HttpApiSchema.status(202)),
      error: NotFoundError
    }).pipe(operation({
      access: "hooks:write",
      summary: "Replay a delivery",
      description:
        "Queues the delivery again, due now with a fresh set of retries: the same event id and body, signed afresh when sent. " +
        "Its earlier attempts stay listed. Answers 202 with the delivery."
    })),
    HttpApiEndpoint.post("recover", "/:hook/recover", {
      params: { hook: RowId },
      payload: RecoverWindow,
      success: RecoverResponse.pipe(HttpApiSchema.status(202)),
      error: [NotFoundError, ValidationError]
    }).pipe(operation({
      access: "hooks:write",
      summary: "Recover the failed deliveries of a time window",
      description:
        "Every failed delivery of the subscription created from `since` to `until` (default: now) is queued again with a fresh " +
        "set of retries, the oldest first. Answers 202 with how many were queued."
    })),
    HttpApiEndpoint.post("ping", "/:hook/ping", {
      params: { hook: RowId },
      success: PingResponse,
      error: [NotFoundError, ServiceUnavailable]
    }).pipe(operation({
      access: "hooks:write",
      summary: "Ping a subscription",
      description:
        "Sends one signed `ping` event (`{\"id\": \"evt_…\", \"type\": \"ping\", \"created_at\": …, \"data\": {\"hook_id\": N}}`) at once " +
        "and answers what came of it: `ok` (a 2xx within the delivery timeout), the `status_code`, `latency_ms` and the `error`. " +
        "It works on an inactive subscription, is not stored, and counts toward no failure; a destination the server refuses " +
        "(a host that is not, or does not resolve to, a public address) is answered as such, never naming an address."
    })),
    HttpApiEndpoint.post("rotateSecret", "/:hook/rotate-secret", {
      params: { hook: RowId },
      // No body at all (as `curl -X POST` sends it) is `{}`, the default overlap: the decoder reads
      // an empty body as null, which the handler tells from a JSON null (server/RawRequest.ts).
      payload: [RotateSecret, Schema.Null],
      success: RotatedSecretResponse,
      error: [NotFoundError, ValidationError]
    }).pipe(operation({
      access: "hooks:write",
      summary: "Rotate a subscription's signing secret",
      description:
        "A new `secret` signs every delivery from now on. The old one signs beside it for `previous_expires_in` seconds " +
        "(0 to 604800, default 86400) until `previous_expires_at`: meanwhile `webhook-signature` carries both `v1,` signatures " +
        "(the new first), `X-CC-Signature` the new one and `X-CC-Signature-Previous` the old. 0 ends the old secret at once; " +
        "rotating again ends the older one at once. The body is optional: none (or an empty one) is `{}`.",
      optionalBody: true
    })),
    HttpApiEndpoint.delete("delete", "/:hook", {
      params: { hook: RowId },
      success: HookDeleted,
      error: NotFoundError
    }).pipe(operation({
      access: "hooks:write",
      summary: "Unsubscribe",
      description: "Deletes the subscription and its pending deliveries: how an automation unsubscribes itself. `{deleted: true}`."
    }))
  )
  .middleware(Idempotent).middleware(Authentication)
  .prefix("/api/v1/hooks")
  .annotateMerge(OpenApi.annotations({ description: "Webhook subscriptions: signed deliveries of the chamber's events to https URLs." })) {}
