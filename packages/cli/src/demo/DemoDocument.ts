/**
 * The demo chamber's records as one import document (docs/cli.md "Import"): realistic members,
 * contacts, events with registrations, invoices in every state with payments, deals, live and past
 * sponsorships and placements, upcoming and past bookings. Dates are relative to the day it is
 * made, so what is live or upcoming stays so on the day a newcomer runs `pnpm start`.
 */
import type { MemberStatus } from "@chamber/core"

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
const PEOPLE = [["Ann", "Lee"], ["Marcus", "Ortiz"], ["Priya", "Shah"], ["Tom", "Becker"], ["Grace", "Kim"], ["Luis", "Romero"],
  ["Hannah", "Wright"], ["Omar", "Haddad"], ["Julia", "Novak"], ["Sam", "Okafor"], ["Rita", "Moreno"], ["Ben", "Carter"]] as const
const TITLES = ["Owner", "Office Manager", "Marketing Lead", "General Manager", "Bookkeeper", null]

export const DEMO_MEMBER_COUNT = 160

/** A small deterministic generator, so every demo chamber looks the same. */
const prng = (seed: number) => () => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff
  return seed / 0x7fffffff
}

const DAY = 86_400_000
const dateOf = (today: Date, days: number) => new Date(today.getTime() + days * DAY).toISOString().slice(0, 10)
const at = (today: Date, days: number, hour: number) => `${dateOf(today, days)}T${String(hour).padStart(2, "0")}:00:00Z`

/** The demo records, `today` being the day they are made. */
export const demoDocument = (today: Date = new Date()) => {
  const rand = prng(42)
  const pick = <A>(xs: ReadonlyArray<A>) => xs[Math.floor(rand() * xs.length)]!

  const members = Array.from({ length: DEMO_MEMBER_COUNT }, (_, i) => {
    const kind = SECOND[i % SECOND.length]!
    const name = `${FIRST[Math.floor(i / SECOND.length) % FIRST.length]} ${kind}${pick(SUFFIX)}`
    const domain = name.toLowerCase().replace(/[^a-z0-9]+/g, "") + ".example"
    const year = 1995 + Math.floor(rand() * 30)
    return {
      ref: `m${i}`,
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
  const domainOf = (m: number) => members[m]!.email.slice("hello@".length)

  const contacts = Array.from({ length: 60 }, (_, i) => {
    const [first, last] = PEOPLE[i % PEOPLE.length]!
    const member = (i * 7) % 40
    return {
      ref: `c${i}`,
      first_name: first,
      last_name: i < PEOPLE.length ? last : `${last}-${Math.floor(i / PEOPLE.length) + 1}`,
      email: `${first.toLowerCase()}.${last.toLowerCase()}${i < PEOPLE.length ? "" : i}@${domainOf(member)}`,
      phone: rand() < 0.6 ? `555-02${String(i).padStart(2, "0")}` : null,
      title: pick(TITLES),
      member_ref: `m${member}`
    }
  })

  const events = [
    { ref: "e0", title: "Annual Gala", starts_at: at(today, 45, 2), ends_at: at(today, 45, 6), status: "published", is_public: true, venue: "Riverside Convention Center", city: "Riverside", state: "CA", capacity: 300 },
    { ref: "e1", title: "Business After Hours: Harbor Bakery", starts_at: at(today, 9, 1), ends_at: at(today, 9, 3), status: "published", is_public: true, venue: "Harbor Bakery", city: "Riverside", state: "CA", capacity: 60 },
    { ref: "e2", title: "Small Business Tax Workshop", starts_at: at(today, 20, 17), status: "published", is_public: false, venue: "Chamber Board Room", capacity: 25 },
    { ref: "e3", title: "Leadership Breakfast", starts_at: at(today, 60, 15), status: "draft" },
    { ref: "e4", title: "Spring Mixer", starts_at: at(today, -40, 1), ends_at: at(today, -40, 3), status: "completed", is_public: true, venue: "Maple Coffee Roasters" },
    { ref: "e5", title: "Golf Classic", starts_at: at(today, -10, 15), status: "cancelled", venue: "Riverside Links" }
  ]
  const registrations = Array.from({ length: 36 }, (_, i) => {
    const event = ["e0", "e0", "e0", "e1", "e1", "e2", "e4", "e4", "e4"][i % 9]!
    const contact = contacts[(i * 5) % contacts.length]!
    return {
      event_ref: event,
      member_ref: contact.member_ref,
      contact_ref: contact.ref,
      first_name: contact.first_name,
      last_name: contact.last_name,
      email: contact.email,
      status: event === "e4" ? (i % 4 === 0 ? "cancelled" : "attended") : i % 11 === 0 ? "waitlisted" : "registered",
      source: pick(["website", "staff", "import"]),
      price_cents: event === "e0" ? 7500 : event === "e2" ? 2500 : 0,
      guest_count: event === "e0" ? Math.floor(rand() * 3) : 0,
      registered_at: at(today, event === "e4" ? -50 + (i % 9) : -20 + (i % 15), 16)
    }
  })

  const deals = [
    { member_ref: "m3", title: "Free home valuation", discount_label: "Free", status: "approved", audience: "public", is_featured: true, ends_at: at(today, 60, 7), description: "Call to book a free market valuation.", cta_url: "https://www.riverbendrealty.example/valuation" },
    { member_ref: "m4", title: "20% off your first roast", discount_label: "20% off", status: "approved", audience: "members", ends_at: at(today, 30, 7), terms: "One per customer." },
    { member_ref: "m6", title: "Free brake inspection", status: "pending", audience: "public" },
    { member_ref: "m8", title: "Buy one growler, get one half off", discount_label: "BOGO 50%", status: "rejected", audience: "public", terms: "21+ only." }
  ]

  const lines = (dues: string) => [{ description: "Annual membership dues", unit: dues }, { description: "Directory listing upgrade", unit: "50.00", quantity: 1 }]
  const invoices = [
    { ref: "i0", member_ref: "m0", lines: lines("450.00"), status: "open", memo: "Thank you for being a member." },
    { ref: "i1", member_ref: "m1", lines: lines("350.00"), status: "open" },
    { ref: "i2", member_ref: "m2", lines: lines("450.00"), status: "open" },
    { ref: "i3", member_ref: "m3", lines: [{ description: "Gala table of 8", unit: "75.00", quantity: 8 }], status: "open" },
    { ref: "i4", member_ref: "m5", lines: lines("250.00"), status: "draft", memo: "Renewal, to send in January." },
    { ref: "i5", member_ref: "m7", lines: lines("350.00"), status: "void", memo: "Issued in error." },
    { ref: "i6", member_ref: "m9", lines: lines("450.00"), status: "uncollectible" },
    { ref: "i7", member_ref: "m10", lines: [{ description: "Sponsorship: Gold tier", unit: "500.00" }], status: "open" }
  ]
  const payments = [
    { invoice_ref: "i1", method: "check", amount: "400.00", received_on: dateOf(today, -12), reference: "Check #1042", notes: "Dropped off at the front desk." },
    { invoice_ref: "i2", method: "card", amount: "500.00", gateway: "stripe", received_on: dateOf(today, -5), reference: "ch_3PqR8s2eZvKYlo2C" },
    { invoice_ref: "i3", method: "ach", amount: "300.00", received_on: dateOf(today, -3), reference: "ACH 88123" },
    { invoice_ref: "i7", method: "card", amount: "500.00", gateway: "square", received_on: dateOf(today, -1) }
  ]

  const sponsorships = [
    { member_ref: "m10", name: "Gold Sponsor", tier: "Gold", status: "active", starts_on: dateOf(today, -90), ends_on: dateOf(today, 275), amount_cents: 50000, invoice_ref: "i7", notes: "Logo on the homepage." },
    { member_ref: "m11", name: "Silver Sponsor", tier: "Silver", status: "active", starts_on: dateOf(today, -30), ends_on: null, amount_cents: 25000 },
    { member_ref: "m12", name: "Logo wall", kind: "logo_wall", status: "active", starts_on: null, ends_on: dateOf(today, 100), amount_cents: 10000 },
    { member_ref: "m13", name: "Gala presenting sponsor", tier: "Presenting", event_ref: "e0", status: "active", starts_on: dateOf(today, -10), ends_on: dateOf(today, 45), amount_cents: 150000 },
    { member_ref: "m14", name: "Gold Sponsor", tier: "Gold", status: "fulfilled", starts_on: dateOf(today, -500), ends_on: dateOf(today, -135), amount_cents: 50000 },
    { member_ref: "m15", name: "Bronze Sponsor", tier: "Bronze", status: "pending", starts_on: dateOf(today, 30), amount_cents: 5000 }
  ]
  const placements = [
    { member_ref: "m16", ad_slot: "homepage-banner", ad_kind: "image", ad_headline: "Fresh bread daily", ad_image_url: "https://cdn.riversidechamber.example/ads/bakery.png", ad_link_url: "https://www.harborbakery.example", ad_cta_label: "Order now", status: "active", starts_on: dateOf(today, -20), ends_on: dateOf(today, 40), impressions: 18240, clicks: 311, amount_cents: 30000, notes: "Renews quarterly." },
    { member_ref: "m17", ad_slot: "newsletter", ad_kind: "text", ad_headline: "Need a dentist?", ad_body: "New patients welcome, evenings available.", ad_link_url: "https://www.mapledentalcare.example", status: "active", starts_on: dateOf(today, -5), ends_on: null, impressions: 4210, clicks: 57, is_included_benefit: true },
    { ad_slot: "sidebar", ad_kind: "text", ad_headline: "Join the Chamber", ad_body: "Grow with 160 local businesses.", ad_link_url: "https://riversidechamber.example/join", status: "active", is_house_ad: true, impressions: 9000, clicks: 90 },
    { member_ref: "m18", ad_slot: "homepage-banner", ad_kind: "image", ad_headline: "Summer tune-ups", ad_image_url: "https://cdn.riversidechamber.example/ads/auto.png", status: "fulfilled", starts_on: dateOf(today, -200), ends_on: dateOf(today, -100), impressions: 52000, clicks: 700 },
    { member_ref: "m19", ad_slot: "sidebar", ad_kind: "text", status: "active", starts_on: dateOf(today, -3), impressions: 0, clicks: 0, notes: "Waiting for the creative." }
  ]
  const bookings = [
    { booking_type_name: "Board Room", starts_at: at(today, 2, 16), ends_at: at(today, 2, 18), status: "confirmed", member_ref: "m0", contact_ref: "c0", visitor_name: "Ann Lee", visitor_email: "ann.lee@harborbakery.example", notes: "Needs the projector." },
    { booking_type_name: "Board Room", starts_at: at(today, 6, 15), ends_at: at(today, 6, 16), status: "confirmed", member_ref: "m7", visitor_name: "Tom Becker", location: "Second floor" },
    { booking_type_name: "Ribbon Cutting", starts_at: at(today, 14, 18), status: "confirmed", member_ref: "m20", visitor_name: "Priya Shah", visitor_phone: "555-0199" },
    { booking_type_name: "Photo Booth", starts_at: at(today, 21, 17), status: "cancelled", cancelled_at: at(today, -1, 12), visitor_name: "Marcus Ortiz" },
    { booking_type_name: "Board Room", starts_at: at(today, -7, 16), ends_at: at(today, -7, 17), status: "confirmed", member_ref: "m3", visitor_name: "Grace Kim" }
  ]

  return { members, contacts, events, registrations, deals, invoices, payments, sponsorships, placements, bookings }
}
