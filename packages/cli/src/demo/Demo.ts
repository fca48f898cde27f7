/**
 * The demo chamber: realistic data in every resource (DemoDocument.ts) loaded through the importer,
 * custom fields, an admin, a staff user and a key with every scope. Runs only on an empty database.
 */
import * as Effect from "effect/Effect"
import { Importer, type ImportProgress, Keys, TenantRepo, Tenants } from "@chamber/core"
import { DEMO_MEMBER_COUNT, demoDocument } from "./DemoDocument.ts"

export { DEMO_MEMBER_COUNT } from "./DemoDocument.ts"
export const DEMO_CHAMBER_NAME = "Riverside Chamber of Commerce"
export const DEMO_ADMIN_EMAIL = "admin@riversidechamber.example"

export interface DemoResult {
  readonly created: boolean
  readonly tenant?: import("@chamber/core").Tenant
  readonly key?: string
  readonly members?: number
}

/** `progress` is told as records are written (for people watching a terminal). */
export const seedDemo = (progress?: ImportProgress) => Effect.gen(function*() {
  const repo = yield* TenantRepo
  if (!(yield* repo.isEmpty)) return { created: false } satisfies DemoResult
  const tenants = yield* Tenants
  const importer = yield* Importer
  const keys = yield* Keys
  const tenant = yield* tenants.create({ name: DEMO_CHAMBER_NAME, website: "https://riversidechamber.example" })
  yield* tenants.addUser(tenant.id, DEMO_ADMIN_EMAIL, "chamber_admin")
  yield* tenants.addUser(tenant.id, "staff@riversidechamber.example", "staff")
  yield* tenants.addField(tenant.id, { resource: "member", key: "membership_tier", label: "Membership tier", api_visible: true })
  yield* tenants.addField(tenant.id, { resource: "member", key: "board_notes", label: "Board notes", api_visible: false })
  yield* importer.run(tenant.id, demoDocument(), { progress }).pipe(Effect.orDie)
  const key = yield* keys.mint({ tenant: tenant.id, asEmail: DEMO_ADMIN_EMAIL, name: "Demo key", scopes: "all" })
  return { created: true, tenant, key: key.key, members: DEMO_MEMBER_COUNT } satisfies DemoResult
})

/**
 * On a database with data, the chamber a second `pnpm start` describes (docs/cli.md "Serving"):
 * the demo chamber, else the only chamber; with its first chamber_admin. `chambers` counts them all.
 */
export const knownChamber = Effect.gen(function*() {
  const tenants = yield* Tenants
  const all = yield* tenants.list
  const tenant = all.find((t) => t.name === DEMO_CHAMBER_NAME) ?? (all.length === 1 ? all[0] : undefined)
  if (tenant === undefined) return { chambers: all.length, tenant, admin: undefined }
  const users = yield* Effect.orDie(tenants.listUsers(tenant.id))
  return { chambers: all.length, tenant, admin: users.find((u) => u.role === "chamber_admin") }
})
