/** What the CLI shows of each record: the same objects for --json and for tables. */
import { ALL_SCOPES, type ApiKey, type CustomFieldDefinition, READ_SCOPES, type Tenant, type User, type Verdict, type WindowUse, wholeSeconds } from "@chamber/core"

export const tenantView = (t: Tenant) => ({
  id: t.public_id,
  name: t.name,
  website: t.website,
  currency: t.currency,
  invoice_prefix: t.invoice_prefix,
  net_terms: t.net_terms,
  created_at: t.created_at,
  deleting_at: t.deleting_at
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

/** A key's scopes in a table: `all (17)` and `read (9)` for the whole sets, else each scope. */
export const describeScopes = (scopes: ReadonlyArray<string>): string =>
  scopes.length === ALL_SCOPES.length ? `all (${ALL_SCOPES.length})`
    : scopes.length === READ_SCOPES.length && READ_SCOPES.every((r) => scopes.includes(r)) ? `read (${READ_SCOPES.length})`
    : scopes.join(",")

export const fieldView = (f: CustomFieldDefinition) => ({
  id: f.id,
  resource: f.resource,
  key: f.key,
  label: f.label,
  api_visible: f.api_visible
})

export interface WindowView {
  readonly limit: number
  readonly used: number
  readonly remaining: number
  /** Seconds until the oldest counted request leaves the window (0: none counted). */
  readonly back_in_seconds: number
}

const windowView = (w: WindowUse): WindowView => ({
  limit: w.limit,
  used: w.used,
  remaining: Math.max(0, w.limit - w.used),
  back_in_seconds: wholeSeconds(w.backInMs)
})

export const usageView = (k: ApiKey, v: Verdict, store: string) => ({
  prefix: k.prefix,
  name: k.name,
  store,
  minute: windowView(v.minute),
  day: windowView(v.day)
})
