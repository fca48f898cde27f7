/** A chamber (tenant), its people and its custom field definitions. */
import * as Schema from "effect/Schema"

export class Tenant extends Schema.Class<Tenant>("Tenant")({
  /** Internal key; never leaves the service. */
  id: Schema.Int,
  /** Public id, `chm_` + random; the `chamber.id` of GET /me (docs/api.md "Connection check"). */
  public_id: Schema.String,
  name: Schema.String,
  website: Schema.NullOr(Schema.String),
  currency: Schema.String,
  invoice_prefix: Schema.String,
  net_terms: Schema.Int,
  created_at: Schema.String,
  /** When its removal began (`chamber tenant delete`), else null: a chamber being deleted is served and changed no more. */
  deleting_at: Schema.NullOr(Schema.String)
}) {}

export interface NewTenant {
  readonly name: string
  readonly website?: string | null | undefined
  readonly currency?: string | undefined
  readonly invoice_prefix?: string | undefined
  readonly net_terms?: number | undefined
}

export const Roles = ["chamber_admin", "staff"] as const
export type Role = (typeof Roles)[number]

export interface User {
  readonly id: number
  readonly tenant_id: number
  readonly email: string
  readonly role: Role
  readonly created_at: string
}

export const CustomFieldResources = ["member", "contact"] as const
export type CustomFieldResource = (typeof CustomFieldResources)[number]

export interface CustomFieldDefinition {
  readonly id: number
  readonly tenant_id: number
  readonly resource: CustomFieldResource
  readonly key: string
  readonly label: string
  readonly api_visible: boolean
  readonly created_at: string
}
