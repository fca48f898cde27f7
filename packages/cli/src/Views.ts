/** What the CLI shows of each record: the same objects for --json and for tables. */
import type { ApiKey, CustomFieldDefinition, Tenant, User } from "@chamber/core"

export const tenantView = (t: Tenant) => ({
  id: t.public_id,
  name: t.name,
  website: t.website,
  currency: t.currency,
  invoice_prefix: t.invoice_prefix,
  net_terms: t.net_terms,
  created_at: t.created_at
})

export const userView = (u: User, tenant: Tenant) => ({ id: u.id, tenant: tenant.public_id, email: u.email, role: u.role, created_at: u.created_at })

export const keyView = (k: ApiKey) => ({
  id: k.id,
  name: k.name,
  prefix: k.prefix,
  scopes: k.scopes,
  daily_limit: k.daily_limit,
  created_at: k.created_at,
  last_used_at: k.last_used_at,
  revoked_at: k.revoked_at
})

export const fieldView = (f: CustomFieldDefinition) => ({
  id: f.id,
  resource: f.resource,
  key: f.key,
  label: f.label,
  api_visible: f.api_visible
})
