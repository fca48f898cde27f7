/** The webhook subscription endpoints (docs/webhooks.md "Subscriptions"): the contract only. */
import * as Schema from "effect/Schema"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import { Hook, HookCreate, HookWithSecret } from "@chamber/core"
import { Authentication } from "../shared/Access.ts"
import { NotFoundError, ServiceUnavailable, ValidationError } from "../shared/HttpErrors.ts"
import { operation } from "../shared/Operation.ts"
import { RowId } from "../shared/Params.ts"

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
        "its signing `secret`. A URL the chamber already subscribed is updated in place: its event list replaced, active " +
        "again, its failure count reset, and its existing secret returned. A 503 when the server cannot decrypt that stored " +
        "secret (its operator's key is wrong, or the secret is damaged): nothing is changed."
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
  .middleware(Authentication)
  .prefix("/api/v1/hooks")
  .annotateMerge(OpenApi.annotations({ description: "Webhook subscriptions: signed deliveries of the chamber's events to https URLs." })) {}
