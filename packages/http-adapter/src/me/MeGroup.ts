/** GET /api/v1/me (spec 2.13, 4.8): the connection check. Any valid key; never 403. */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { Authentication } from "../shared/Authentication.ts"

export const ConnectionInfo = Schema.Struct({
  chamber: Schema.Struct({
    id: Schema.NullOr(Schema.String),
    name: Schema.NullOr(Schema.String),
    website: Schema.NullOr(Schema.String)
  }),
  key: Schema.Struct({
    name: Schema.String,
    prefix: Schema.String,
    scopes: Schema.Array(Schema.String),
    can_write: Schema.Boolean
  }),
  label: Schema.String
}).annotate({ identifier: "ConnectionInfo" })

export class MeGroup extends HttpApiGroup.make("me")
  .add(HttpApiEndpoint.get("me", "/api/v1/me", { success: ConnectionInfo }))
  .middleware(Authentication) {}
