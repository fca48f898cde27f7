/** GET /api/v1/me (docs/api.md "Connection check"): the connection check. Any valid key; never 403. */
import * as Schema from "effect/Schema"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import { ALL_SCOPES } from "@chamber/core"
import { AnyValidKey, Authentication, Idempotent } from "../shared/Access.ts"
import { operation } from "../shared/Operation.ts"

export const ConnectionInfo = Schema.Struct({
  chamber: Schema.Struct({
    id: Schema.NullOr(Schema.String),
    name: Schema.NullOr(Schema.String),
    website: Schema.NullOr(Schema.String)
  }),
  key: Schema.Struct({
    name: Schema.String,
    prefix: Schema.String,
    scopes: Schema.Array(Schema.Literals(ALL_SCOPES)),
    can_write: Schema.Boolean
  }),
  label: Schema.String
}).annotate({
  identifier: "ConnectionInfo",
  examples: [{
    chamber: { id: "chm_3kTq9ZrW1xYb7LmN", name: "Riverside Chamber of Commerce", website: "https://riversidechamber.example" },
    key: { name: "Zapier", prefix: "cck_4fT9aQ2m", scopes: ["members:read", "members:write"], can_write: true },
    label: "Riverside Chamber of Commerce (Zapier)"
  }]
})

export class MeGroup extends HttpApiGroup.make("me")
  .add(
    HttpApiEndpoint.get("me", "/api/v1/me", { success: ConnectionInfo }).pipe(operation({
      access: AnyValidKey,
      summary: "Check the connection",
      description: "Which chamber the key belongs to, the key's name, prefix and exact scopes, and whether it can write."
    }))
  )
  .middleware(Idempotent).middleware(Authentication)
  .annotateMerge(OpenApi.annotations({ description: "The connection check." })) {}
