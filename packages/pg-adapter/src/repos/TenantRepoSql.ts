/** Tenants, their people and their custom field definitions in SQL. */
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { type CustomFieldDefinition, Tenant, TenantRepo, type User } from "@chamber/core"
import { isoRequired, num } from "./rows.ts"

const toTenant = (r: any): Tenant =>
  new Tenant({
    id: num(r.id),
    public_id: r.public_id,
    name: r.name,
    website: r.website,
    currency: r.currency,
    invoice_prefix: r.invoice_prefix,
    net_terms: num(r.net_terms),
    created_at: isoRequired(r.created_at)
  })

const toUser = (r: any): User => ({
  id: num(r.id),
  tenant_id: num(r.tenant_id),
  email: r.email,
  role: r.role,
  created_at: isoRequired(r.created_at)
})

const toField = (r: any): CustomFieldDefinition => ({
  id: num(r.id),
  tenant_id: num(r.tenant_id),
  resource: r.resource,
  key: r.key,
  label: r.label,
  api_visible: r.api_visible,
  created_at: isoRequired(r.created_at)
})

export const TenantRepoSql = Layer.effect(TenantRepo, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const die = <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.orDie(self)

  return TenantRepo.of({
    insert: (t) => die(sql`INSERT INTO tenants ${sql.insert({ ...t })} RETURNING *`).pipe(Effect.map((rows) => toTenant(rows[0]))),
    list: die(sql`SELECT * FROM tenants ORDER BY id`).pipe(Effect.map((rows) => rows.map(toTenant))),
    find: (ref) => {
      const byId = typeof ref === "number" || /^\d+$/.test(ref)
      return die(byId ? sql`SELECT * FROM tenants WHERE id = ${Number(ref)}` : sql`SELECT * FROM tenants WHERE public_id = ${ref}`).pipe(
        Effect.map((rows) => (rows[0] === undefined ? undefined : toTenant(rows[0])))
      )
    },
    isEmpty: die(sql`SELECT NOT EXISTS (SELECT 1 FROM tenants) AS empty`).pipe(Effect.map((rows) => rows[0]!.empty === true)),
    insertUser: (tenantId, email, role) =>
      die(sql`INSERT INTO users (tenant_id, email, role) VALUES (${tenantId}, ${email}, ${role})
              ON CONFLICT (tenant_id, email) DO NOTHING RETURNING *`).pipe(
        Effect.map((rows) => (rows[0] === undefined ? undefined : toUser(rows[0])))
      ),
    findUser: (tenantId, email) =>
      die(sql`SELECT * FROM users WHERE tenant_id = ${tenantId} AND email = ${email}`).pipe(
        Effect.map((rows) => (rows[0] === undefined ? undefined : toUser(rows[0])))
      ),
    insertField: (tenantId, f) =>
      die(sql`INSERT INTO custom_field_definitions (tenant_id, resource, key, label, api_visible)
              VALUES (${tenantId}, ${f.resource}, ${f.key}, ${f.label}, ${f.api_visible})
              ON CONFLICT (tenant_id, resource, key) DO NOTHING RETURNING *`).pipe(
        Effect.map((rows) => (rows[0] === undefined ? undefined : toField(rows[0])))
      ),
    listFields: (tenantId) =>
      die(sql`SELECT * FROM custom_field_definitions WHERE tenant_id = ${tenantId} ORDER BY resource, key`).pipe(
        Effect.map((rows) => rows.map(toField))
      )
  })
}))
