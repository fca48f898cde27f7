/** Tenant administration: chambers, their people, their custom fields. */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { randomBase62 } from "../shared/Ids.ts"
import { InvalidInput } from "../shared/Errors.ts"
import { TenantNotFound } from "./TenantErrors.ts"
import { TenantRepo } from "./TenantRepo.ts"
import type { CustomFieldDefinition, CustomFieldResource, NewTenant, Role, Tenant, User } from "./Tenant.ts"
import { CustomFieldResources, Roles } from "./Tenant.ts"

/** A custom field's key. */
export const FIELD_KEY = /^[a-z][a-z0-9_]{0,63}$/
const CURRENCY = /^[A-Z]{3}$/
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

/** A chamber's website: an http or https URL with a dotted host name, no spaces, at most 255 characters. */
const isWebsite = (text: string): boolean => {
  if (!/^https?:\/\/\S+$/i.test(text) || text.length > 255) return false
  const url = URL.parse(text)
  return url !== null && url.hostname.includes(".") && url.username === "" && url.password === ""
}

const websiteProblem = (text: string): string =>
  isWebsite(`https://${text}`) && !text.includes("://")
    ? `The website must be a full http or https URL: did you mean https://${text}?`
    : "The website must be a full http or https URL, such as https://lakeside.example."

const invalid = InvalidInput.field

export class Tenants extends Context.Service<Tenants, {
  readonly create: (input: NewTenant) => Effect.Effect<Tenant, InvalidInput>
  readonly list: Effect.Effect<ReadonlyArray<Tenant>>
  readonly get: (ref: string | number) => Effect.Effect<Tenant, TenantNotFound>
  readonly addUser: (tenantRef: string | number, email: string, role: Role) => Effect.Effect<User, TenantNotFound | InvalidInput>
  readonly listUsers: (tenantRef: string | number) => Effect.Effect<ReadonlyArray<User>, TenantNotFound>
  readonly addField: (
    tenantRef: string | number,
    field: { readonly resource: CustomFieldResource; readonly key: string; readonly label: string; readonly api_visible: boolean }
  ) => Effect.Effect<CustomFieldDefinition, TenantNotFound | InvalidInput>
  readonly listFields: (tenantRef: string | number) => Effect.Effect<ReadonlyArray<CustomFieldDefinition>, TenantNotFound>
}>()("chamber/Tenants") {
  static readonly layer = Layer.effect(Tenants, Effect.gen(function*() {
    const repo = yield* TenantRepo

    const get = Effect.fn("Tenants.get")(function*(ref: string | number) {
      const tenant = yield* repo.find(ref)
      if (tenant === undefined) return yield* new TenantNotFound({ ref: String(ref) })
      if (tenant.deleting_at !== null) return yield* new TenantNotFound({ ref: tenant.public_id, beingDeleted: true })
      return tenant
    })

    const create = Effect.fn("Tenants.create")(function*(input: NewTenant) {
      const name = input.name.trim()
      if (name === "" || name.length > 255) return yield* invalid("name", "The name field is required (at most 255 characters).")
      const currency = (input.currency ?? "USD").toUpperCase()
      if (!CURRENCY.test(currency)) return yield* invalid("currency", "The currency must be an ISO 4217 code such as USD.")
      const net_terms = input.net_terms ?? 30
      if (!Number.isInteger(net_terms) || net_terms < 0 || net_terms > 365) {
        return yield* invalid("net_terms", "The net terms must be a whole number of days between 0 and 365.")
      }
      const invoice_prefix = input.invoice_prefix ?? "INV-"
      if (invoice_prefix.length > 20) return yield* invalid("invoice_prefix", "The invoice prefix must not be greater than 20 characters.")
      const website = input.website ?? null
      if (website !== null && !isWebsite(website)) return yield* invalid("website", websiteProblem(website))
      return yield* repo.insert({
        public_id: `chm_${randomBase62(16)}`,
        name,
        website,
        currency,
        invoice_prefix,
        net_terms
      })
    })

    const addUser = Effect.fn("Tenants.addUser")(function*(tenantRef: string | number, email: string, role: Role) {
      const tenant = yield* get(tenantRef)
      if (!EMAIL.test(email)) return yield* invalid("email", "The email must be a valid email address.")
      if (!Roles.includes(role)) return yield* invalid("role", `The role must be one of: ${Roles.join(", ")}.`)
      const user = yield* repo.insertUser(tenant.id, email.toLowerCase(), role)
      if (user === undefined) return yield* invalid("email", "This person already belongs to the chamber.")
      return user
    })

    const listUsers = Effect.fn("Tenants.listUsers")(function*(tenantRef: string | number) {
      const tenant = yield* get(tenantRef)
      return yield* repo.listUsers(tenant.id)
    })

    const addField = Effect.fn("Tenants.addField")(function*(
      tenantRef: string | number,
      field: { readonly resource: CustomFieldResource; readonly key: string; readonly label: string; readonly api_visible: boolean }
    ) {
      const tenant = yield* get(tenantRef)
      if (!CustomFieldResources.includes(field.resource)) {
        return yield* invalid("resource", `The resource must be one of: ${CustomFieldResources.join(", ")}.`)
      }
      if (!FIELD_KEY.test(field.key)) {
        return yield* invalid("key", "The key must start with a letter and hold only lower-case letters, digits and underscores.")
      }
      const created = yield* repo.insertField(tenant.id, field)
      if (created === undefined) return yield* invalid("key", `The ${field.resource} field ${field.key} already exists.`)
      return created
    })

    const listFields = Effect.fn("Tenants.listFields")(function*(tenantRef: string | number) {
      const tenant = yield* get(tenantRef)
      return yield* repo.listFields(tenant.id)
    })

    const list = repo.list.pipe(Effect.withSpan("Tenants.list"))

    return Tenants.of({ create, list, get, addUser, listUsers, addField, listFields })
  }))
}
