/**
 * Deterministic, varied members for the bench: a chamber directory's mix of company names,
 * industries, addresses, optional fields left empty, and custom field values (two visible
 * through the API, one hidden). A page of 100 is roughly 80 KB of JSON.
 */
import * as Effect from "effect/Effect"
import { Keys, type MemberCreateInput, Members, type MemberStatus, Tenants } from "../packages/core/src/index.ts"
import { StorageLive } from "../packages/pg-adapter/src/index.ts"

/** mulberry32: the same members on every run. */
const rng = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = seed
  t = Math.imul(t ^ (t >>> 15), t | 1)
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

const PREFIXES = ["Riverside", "Summit", "Blue Heron", "Oakwood", "Harbor", "Granite", "Maple Street", "Northgate", "Cedar", "Lakeshore", "Pioneer", "Silver Creek", "Main Street", "Old Town", "Prairie", "Redwood", "Sunrise", "Valley", "Westfield", "Copperline"]
const CORES = ["Bakery", "Dental", "Auto Repair", "Insurance", "Law Group", "Realty", "Brewing Co.", "Fitness", "Veterinary Clinic", "Hardware", "Accounting", "Florist", "Printing", "Plumbing & Heating", "Coffee Roasters", "Credit Union", "Pediatrics", "Landscaping", "Architects", "IT Solutions", "Bookshop", "Cleaners", "Chiropractic", "Marketing", "Electric"]
const SUFFIXES = ["", "", "", " LLC", " Inc.", " & Sons", " Group", " Partners", " Co."]
const INDUSTRIES = ["Retail", "Healthcare", "Professional Services", "Hospitality", "Construction", "Financial Services", "Technology", "Manufacturing", "Real Estate", "Education", "Nonprofit", "Automotive", "Food & Beverage", "Arts & Entertainment"]
const STREETS = ["Main St", "Oak Ave", "Elm St", "Washington Blvd", "Park Ave", "Lake Dr", "River Rd", "Church St", "Market St", "Highland Ave", "Mill Rd", "Center St"]
const CITIES: ReadonlyArray<readonly [string, string, string]> = [["Springfield", "IL", "627"], ["Riverside", "CA", "925"], ["Madison", "WI", "537"], ["Franklin", "TN", "370"], ["Salem", "OR", "973"], ["Georgetown", "TX", "786"], ["Fairview", "NC", "287"], ["Greenville", "SC", "296"], ["Bristol", "CT", "060"], ["Clinton", "IA", "527"]]
const SLOGANS = ["Serving our neighbors since day one.", "Quality you can count on.", "Local people, local service.", "Where the community comes together.", "Built on trust, one customer at a time.", "Your hometown experts.", "Fresh ideas for a growing town.", "Proudly independent and family owned."]
const ABOUT_SENTENCES = [
  "We are a locally owned business that has served the region for more than two decades.", "Our team of experienced professionals takes pride in personal service and honest advice.",
  "We partner with schools, nonprofits and neighboring businesses to support community events throughout the year.",
  "Customers count on us for reliable work, fair prices and a friendly face every time they visit.", "We recently expanded our downtown location and added evening and weekend hours.",
  "Ask us about our loyalty program and seasonal specials for chamber members.", "Sustainability matters to us: we source locally whenever we can and recycle everything we are able to.",
  "Our founders started the business with a single storefront and a commitment to doing things right."
]
const SURNAMES = [
  "Anderson", "Baker", "Castillo", "Chen", "Clark", "Collins", "Diaz", "Edwards", "Evans", "Fischer", "Foster", "Garcia", "Gonzalez", "Gupta", "Hall", "Harris", "Hernandez",
  "Hughes", "Jackson", "Johnson", "Kelly", "Kim", "King", "Kowalski", "Lee", "Lewis", "Lopez", "Martin", "Martinez", "Miller", "Mitchell", "Moore", "Morgan", "Murphy",
  "Nguyen", "O'Brien", "Olsen", "Parker", "Patel", "Perez", "Phillips", "Ramirez", "Reed", "Reyes", "Rivera", "Roberts", "Robinson", "Rossi", "Sanchez", "Schmidt",
  "Scott", "Shah", "Smith", "Sullivan", "Taylor", "Thompson", "Turner", "Walker", "Wright", "Young"
]
const LEVELS = ["Bronze", "Silver", "Gold", "Platinum", "Trustee"]
const STATUSES: ReadonlyArray<MemberStatus> = ["active", "active", "active", "active", "active", "active", "pending", "lapsed", "former"]

/** One member's fields after its name, drawn from `random` (the seeded ones also get custom field values). */
const memberDraw = (random: () => number) => {
  const pick = <A>(items: ReadonlyArray<A>): A => items[Math.floor(random() * items.length)]!
  const maybe = <A>(p: number, value: () => A): A | null => (random() < p ? value() : null)
  const digits = (n: number) => Array.from({ length: n }, () => Math.floor(random() * 10)).join("")
  const name = () => `${pick(PREFIXES)} ${pick(CORES)}${pick(SUFFIXES)}`
  const fields = (name: string, customFields: boolean): MemberCreateInput => {
    const domain = name.toLowerCase().replace(/[^a-z0-9]+/g, "")
    const [city, state, zip3] = pick(CITIES)
    const industry = pick(INDUSTRIES)
    const about = Array.from({ length: 2 + Math.floor(random() * 3) }, () => pick(ABOUT_SENTENCES)).join(" ")
    const year = 1985 + Math.floor(random() * 39)
    return {
      name, status: pick(STATUSES), industry,
      secondary_industries: random() < 0.6 ? Array.from({ length: 1 + Math.floor(random() * 3) }, () => pick(INDUSTRIES)).filter((s) => s !== industry) : null,
      slogan: maybe(0.8, () => pick(SLOGANS)),
      about: maybe(0.9, () => about),
      website: maybe(0.85, () => `https://www.${domain}.example`),
      email: maybe(0.9, () => `info@${domain}.example`),
      phone: maybe(0.9, () => `(${digits(3)}) ${digits(3)}-${digits(4)}`),
      address_line1: `${100 + Math.floor(random() * 9800)} ${pick(STREETS)}`,
      address_line2: maybe(0.25, () => `Suite ${100 + Math.floor(random() * 400)}`), city, state, zip: `${zip3}${digits(2)}`,
      member_since: `${year}-${String(1 + Math.floor(random() * 12)).padStart(2, "0")}-${String(1 + Math.floor(random() * 28)).padStart(2, "0")}`,
      employee_count: maybe(0.85, () => 1 + Math.floor(random() ** 3 * 500)),
      directory_visible: random() < 0.9,
      ...(customFields ? {
        custom_fields: {
          membership_level: pick(LEVELS),
          board_member: random() < 0.08,
          internal_notes: `Renewal contact: ${pick(["Pat", "Sam", "Alex", "Jordan", "Taylor"])}; dues ${pick(["paid", "invoiced", "overdue"])}.`
        }
      } : {})
    }
  }
  return { pick, maybe, name, fields }
}

export const memberInputs = (count: number): ReadonlyArray<MemberCreateInput> => {
  const draw = memberDraw(rng(20240611))
  return Array.from({ length: count }, (_, i) => draw.fields(`${draw.name()} ${i + 1}`, true))
}

/**
 * Bodies for POST /api/v1/members, one per call: what a client sends (no custom fields, no slug),
 * with the same mix of empty and filled fields as the seeded members. Names are a place or a
 * family name or two (`Riverside Bakery`, `Nguyen Dental LLC`, `Garcia & Patel Law Group`)
 * without a number: seven draws in ten from some 14,000 combinations, the rest from 630,000, so
 * that over a run roughly one create in eight to one in four finds its slug taken and takes `-2`,
 * `-3`... (`pnpm bench` prints the share; the seeded members' `...-17` slugs are read as taken too).
 */
export const memberBodies = (seed = 20261122): (() => MemberCreateInput) => {
  const random = rng(seed)
  const draw = memberDraw(random)
  const owner = () => {
    const u = random()
    if (u < 0.35) return draw.pick(PREFIXES)
    if (u < 0.7) return draw.pick(SURNAMES)
    return `${draw.pick(SURNAMES)} & ${draw.pick(SURNAMES)}`
  }
  return () => draw.fields(`${owner()} ${draw.pick(CORES)}${draw.pick(SUFFIXES)}`, false)
}

const DUES: ReadonlyArray<readonly [string, string]> = [["Bronze", "250.00"], ["Silver", "450.00"], ["Gold", "900.00"], ["Platinum", "1500.00"], ["Trustee", "5000.00"]]
const EXTRAS: ReadonlyArray<readonly [string, string]> = [["Annual gala ticket", "85.00"], ["Ribbon cutting ceremony", "150.00"], ["Business expo booth", "325.50"], ["Luncheon seat", "27.50"]]

/** Bodies for POST /api/v1/invoices: dues for one of `memberIds`, sometimes extras, sometimes a memo. */
export const invoiceBodies = (memberIds: ReadonlyArray<number>) => {
  const random = rng(20261123)
  const { pick, maybe } = memberDraw(random)
  return () => {
    const [level, dues] = pick(DUES)
    const lines: Array<{ description: string; unit: string; quantity?: number }> = [{ description: `Annual membership dues (${level})`, unit: dues }]
    const extras = Math.floor(random() * 3)
    for (let i = 0; i < extras; i++) {
      const [description, unit] = pick(EXTRAS)
      lines.push(random() < 0.5 ? { description, unit } : { description, unit, quantity: 1 + Math.floor(random() * 4) })
    }
    return { member_id: pick(memberIds), lines, memo: maybe(0.5, () => "Thank you for being a member.") }
  }
}

/** Bodies for POST /api/v1/invoices/{id}/payments paying `balanceCents` in full. */
export const paymentBodies = () => {
  const random = rng(20261124)
  const { pick, maybe } = memberDraw(random)
  let check = 1000
  return (balanceCents: number) => {
    const method = pick(["check", "check", "card", "ach", "cash"] as const)
    const [amount, received_on] = [`${Math.floor(balanceCents / 100)}.${String(balanceCents % 100).padStart(2, "0")}`, new Date().toISOString().slice(0, 10)]
    const reference = method === "check" ? `Check #${check++}` : maybe(0.5, () => `Batch ${Math.floor(random() * 90000) + 10000}`)
    return { method, amount, received_on, reference, notes: maybe(0.3, () => "Dropped off at the front desk.") }
  }
}

/**
 * A chamber through the core services: an admin, with `fields` the three member custom fields
 * (two shown by the API, one hidden), `members` members, and a key per entry of `keys` (name,
 * scopes), each with a daily limit no run reaches.
 */
type Chamber<K extends string> = { readonly name: string; readonly fields: boolean; readonly members: number; readonly keys: Record<K, readonly [string, string]> }
export const seedChamber = <K extends string>(o: Chamber<K>) =>
  Effect.gen(function*() {
    const [tenants, members, keys] = [yield* Tenants, yield* Members, yield* Keys]
    const admin = "admin@bench-chamber.example"
    const tenant = yield* tenants.create({ name: o.name, website: "https://bench-chamber.example" })
    yield* tenants.addUser(tenant.id, admin, "chamber_admin")
    const fields = [["membership_level", "Membership level", true], ["board_member", "Board member", true], ["internal_notes", "Internal notes", false]] as const
    for (const [key, label, api_visible] of o.fields ? fields : []) yield* tenants.addField(tenant.id, { resource: "member", key, label, api_visible })
    yield* Effect.forEach(memberInputs(o.members), (input) => members.create(tenant.id, input), { concurrency: 8, discard: true })
    const minted: Partial<Record<K, string>> = {}
    for (const [k, [name, scopes]] of Object.entries(o.keys) as Array<[K, readonly [string, string]]>) {
      minted[k] = (yield* keys.mint({ tenant: tenant.id, asEmail: admin, name, scopes, dailyLimit: 2_000_000_000 })).key
    }
    return { tenantId: tenant.id, keys: minted as Record<K, string> }
  }).pipe(Effect.orDie)

/** `seedChamber` on the PostgreSQL database at `url`. */
export const seedOn = <K extends string>(url: string, o: Chamber<K>) =>
  Effect.runPromise(seedChamber(o).pipe(Effect.provide(StorageLive({ _tag: "Postgres", url, maxConnections: 10 }))))
