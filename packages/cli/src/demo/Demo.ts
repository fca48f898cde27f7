/**
 * The demo chamber: realistic members (enough to page), custom fields, an admin and a key with
 * every scope. Runs only on an empty database; everything goes through the core services.
 */
import { Effect } from "effect"
import { Keys, type MemberStatus, Members, TenantRepo, Tenants } from "@chamber/core"

const FIRST = ["Harbor", "Maple", "Summit", "Riverbend", "Copper", "Bluebird", "Granite", "Lantern", "Oak & Iron", "Prairie",
  "Northgate", "Silverline", "Cedar", "Beacon", "Willow", "Keystone", "Redwood", "Meadow", "Ironwood", "Crescent"]
const SECOND = ["Bakery", "Dental Care", "Hardware", "Realty", "Coffee Roasters", "Law Group", "Auto Repair", "Credit Union",
  "Brewing Co.", "Insurance", "Family Medicine", "Landscaping", "Print Shop"]
const SUFFIX = ["", ", LLC", " Inc.", " & Sons", ""]
const INDUSTRIES: Record<string, string> = {
  Bakery: "Food & Beverage", "Dental Care": "Healthcare", Hardware: "Retail", Realty: "Real Estate",
  "Coffee Roasters": "Food & Beverage", "Law Group": "Professional Services", "Auto Repair": "Automotive",
  "Credit Union": "Finance", "Brewing Co.": "Food & Beverage", Insurance: "Finance", "Family Medicine": "Healthcare",
  Landscaping: "Home Services", "Print Shop": "Professional Services"
}
const STREETS = ["Main St", "Oak Ave", "River Rd", "2nd St", "Market St", "Elm St", "Lakeview Dr", "Church St"]
const STATUSES: ReadonlyArray<MemberStatus> = ["active", "active", "active", "active", "pending", "lapsed", "former"]
export const DEMO_MEMBER_COUNT = 160
export const DEMO_CHAMBER_NAME = "Riverside Chamber of Commerce"
export const DEMO_ADMIN_EMAIL = "admin@riversidechamber.example"

/** A small deterministic generator, so every demo chamber looks the same. */
const prng = (seed: number) => () => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff
  return seed / 0x7fffffff
}

const demoMembers = () => {
  const rand = prng(42)
  const pick = <A>(xs: ReadonlyArray<A>) => xs[Math.floor(rand() * xs.length)]!
  return Array.from({ length: DEMO_MEMBER_COUNT }, (_, i) => {
    const kind = SECOND[i % SECOND.length]!
    const name = `${FIRST[Math.floor(i / SECOND.length) % FIRST.length]} ${kind}${pick(SUFFIX)}`
    const domain = name.toLowerCase().replace(/[^a-z0-9]+/g, "") + ".example"
    const year = 1995 + Math.floor(rand() * 30)
    return {
      name,
      status: pick(STATUSES),
      industry: INDUSTRIES[kind] ?? null,
      secondary_industries: rand() < 0.3 ? ["Community", "Local Business"] : null,
      slogan: rand() < 0.5 ? `Serving Riverside since ${year}` : null,
      about: `${name} is a locally owned ${kind.toLowerCase()} business and proud member of the Riverside Chamber.`,
      website: `https://www.${domain}`,
      email: `hello@${domain}`,
      phone: `555-01${String(i).padStart(2, "0").slice(-2)}`,
      address_line1: `${100 + Math.floor(rand() * 900)} ${pick(STREETS)}`,
      address_line2: rand() < 0.2 ? `Suite ${Math.floor(rand() * 400)}` : null,
      city: "Riverside",
      state: "CA",
      zip: `925${String(Math.floor(rand() * 100)).padStart(2, "0")}`,
      member_since: `${year}-${String(1 + Math.floor(rand() * 12)).padStart(2, "0")}-${String(1 + Math.floor(rand() * 28)).padStart(2, "0")}`,
      employee_count: Math.floor(rand() * 250),
      directory_visible: rand() < 0.9,
      custom_fields: { membership_tier: pick(["Gold", "Silver", "Bronze"]), board_notes: "internal only" }
    }
  })
}

export interface DemoResult {
  readonly created: boolean
  readonly tenant?: import("@chamber/core").Tenant
  readonly key?: string
  readonly members?: number
}

/** `progress(done, total)` is called as members are created (for people watching a terminal). */
export const seedDemo = (progress?: (done: number, total: number) => void) => Effect.gen(function*() {
  const repo = yield* TenantRepo
  if (!(yield* repo.isEmpty)) return { created: false } satisfies DemoResult
  const tenants = yield* Tenants
  const members = yield* Members
  const keys = yield* Keys
  const tenant = yield* tenants.create({ name: DEMO_CHAMBER_NAME, website: "https://riversidechamber.example" })
  yield* tenants.addUser(tenant.id, DEMO_ADMIN_EMAIL, "chamber_admin")
  yield* tenants.addUser(tenant.id, "staff@riversidechamber.example", "staff")
  yield* tenants.addField(tenant.id, { resource: "member", key: "membership_tier", label: "Membership tier", api_visible: true })
  yield* tenants.addField(tenant.id, { resource: "member", key: "board_notes", label: "Board notes", api_visible: false })
  const all = demoMembers()
  progress?.(0, all.length)
  for (const [i, m] of all.entries()) {
    yield* members.create(tenant.id, m)
    if ((i + 1) % 40 === 0 || i + 1 === all.length) progress?.(i + 1, all.length)
  }
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
