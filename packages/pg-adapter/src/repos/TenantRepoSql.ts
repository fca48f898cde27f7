/** Tenants, their people and their custom field definitions in SQL. */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import { type CustomFieldDefinition, type CustomFieldResource, type Role, Tenant, TenantRepo, type User } from "@chamber/core"
import { type Int8, iso } from "./rows.ts"
import { andShownRow, ImportSlices } from "./HeldRows.ts"

interface TenantRow {
  readonly id: Int8
  readonly public_id: string
  readonly name: string
  readonly website: string | null
  readonly currency: string
  readonly invoice_prefix: string
  readonly net_terms: number
  readonly created_at: Date
  readonly deleting_at: Date | null
}
interface UserRow {
  readonly id: Int8
  readonly tenant_id: Int8
  readonly email: string
  readonly role: Role
  readonly created_at: Date
}
interface FieldRow {
  readonly id: Int8
  readonly tenant_id: Int8
  readonly resource: CustomFieldResource
  readonly key: string
  readonly label: string
  readonly api_visible: boolean
  readonly created_at: Date
}

const toTenant = (r: TenantRow): Tenant =>
  new Tenant({ ...r, id: Number(r.id), created_at: r.created_at.toISOString(), deleting_at: iso(r.deleting_at) })

const toUser = (r: UserRow): User => ({ ...r, id: Number(r.id), tenant_id: Number(r.tenant_id), created_at: r.created_at.toISOString() })

const toField = (r: FieldRow): CustomFieldDefinition => ({
  ...r,
  id: Number(r.id),
  tenant_id: Number(r.tenant_id),
  created_at: r.created_at.toISOString()
})

const first = <R, A>(to: (row: R) => A) => (rows: ReadonlyArray<R>) => (rows[0] === undefined ? undefined : to(rows[0]))

export const TenantRepoSql = Layer.effect(TenantRepo, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const sliced = yield* ImportSlices

  return TenantRepo.of({
    insert: (t) => sql<TenantRow>`INSERT INTO tenants ${sql.insert({ ...t })} RETURNING *`.pipe(Effect.map((rows) => toTenant(rows[0]!)), Effect.orDie),
    list: sql<TenantRow>`SELECT * FROM tenants ORDER BY id`.pipe(Effect.map((rows) => rows.map(toTenant)), Effect.orDie),
    find: (ref) => {
      const byId = typeof ref === "number" || /^\d{1,15}$/.test(ref)
      return (byId ? sql<TenantRow>`SELECT * FROM tenants WHERE id = ${Number(ref)}` : sql<TenantRow>`SELECT * FROM tenants WHERE public_id = ${ref}`)
        .pipe(Effect.map(first(toTenant)), Effect.orDie)
    },
    isEmpty: sql<{ readonly empty: boolean }>`SELECT NOT EXISTS (SELECT 1 FROM tenants) AS empty`.pipe(
      Effect.map((rows) => rows[0]!.empty),
      Effect.orDie
    ),
    insertUser: (tenantId, email, role) =>
      sql<UserRow>`INSERT INTO users (tenant_id, email, role) VALUES (${tenantId}, ${email}, ${role})
              ON CONFLICT (tenant_id, email) DO NOTHING RETURNING *`.pipe(Effect.map(first(toUser)), Effect.orDie),
    findUser: (tenantId, email) =>
      sql<UserRow>`SELECT * FROM users WHERE tenant_id = ${tenantId} AND email = ${email}`.pipe(Effect.map(first(toUser)), Effect.orDie),
    listUsers: (tenantId) =>
      sql<UserRow>`SELECT * FROM users WHERE tenant_id = ${tenantId} ORDER BY id`.pipe(Effect.map((rows) => rows.map(toUser)), Effect.orDie),
    insertField: (tenantId, f) =>
      sql<FieldRow>`INSERT INTO custom_field_definitions (tenant_id, resource, key, label, api_visible)
              VALUES (${tenantId}, ${f.resource}, ${f.key}, ${f.label}, ${f.api_visible})
              ON CONFLICT (tenant_id, resource, key) DO NOTHING RETURNING *`.pipe(Effect.map(first(toField)), Effect.orDie),
    listFields: (tenantId) =>
      sql<FieldRow>`SELECT * FROM custom_field_definitions d WHERE d.tenant_id = ${tenantId}${
        sql.literal(andShownRow(sliced, "d"))
      } ORDER BY resource, key`.pipe(
        Effect.map((rows) => rows.map(toField)),
        Effect.orDie
      )
  })
}))
