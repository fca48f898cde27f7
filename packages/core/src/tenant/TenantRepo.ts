/** Storage port for tenants, users and custom field definitions. */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { CustomFieldDefinition, CustomFieldResource, NewTenant, Role, Tenant, User } from "./Tenant.ts"

export class TenantRepo extends Context.Service<TenantRepo, {
  readonly insert: (tenant: Required<NewTenant> & { readonly public_id: string }) => Effect.Effect<Tenant>
  readonly list: Effect.Effect<ReadonlyArray<Tenant>>
  /** By internal id or public id, also while it is being deleted (`deleting_at` says so). */
  readonly find: (ref: string | number) => Effect.Effect<Tenant | undefined>
  readonly isEmpty: Effect.Effect<boolean>
  readonly insertUser: (tenantId: number, email: string, role: Role) => Effect.Effect<User | undefined>
  readonly findUser: (tenantId: number, email: string) => Effect.Effect<User | undefined>
  /** A chamber's people, oldest first. */
  readonly listUsers: (tenantId: number) => Effect.Effect<ReadonlyArray<User>>
  readonly insertField: (
    tenantId: number,
    field: { readonly resource: CustomFieldResource; readonly key: string; readonly label: string; readonly api_visible: boolean }
  ) => Effect.Effect<CustomFieldDefinition | undefined>
  readonly listFields: (tenantId: number) => Effect.Effect<ReadonlyArray<CustomFieldDefinition>>
}>()("chamber/TenantRepo") {}
