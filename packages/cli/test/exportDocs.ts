/**
 * What the export tests share: a generated chamber of any size holding every state the API and the
 * core library reach, and the comparison of two export documents equal but for ids, on documents
 * held whole or on files read a record at a time.
 */
import { assert } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { createReadStream } from "node:fs"
import { createInterface } from "node:readline"
import { isDeepStrictEqual } from "node:util"
import { chamber, json, serving } from "./harness.ts"

export type Doc = Record<string, Array<Record<string, unknown>>>

/** One request to the API of a running `chamber serve`: its status and JSON body. */
export const send = (port: number, method: string, path: string, key: string, body: unknown) =>
  Effect.promise(async () => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify(body)
    })
    return { status: res.status, body: await res.json() as unknown }
  })

/**
 * Records of one document as their places: each ref (`members:12`) becomes its record's place
 * (`members#0`), so the records of two documents equal but for ids are equal. Every ref must be
 * `<collection>:<id>` and unique, and each `<thing>_ref` must name an earlier record.
 */
export const placer = () => {
  const places = new Map<unknown, string>()
  const counts: Record<string, number> = {}
  return (collection: string, r: Record<string, unknown>): Record<string, unknown> => {
    assert.match(String(r.ref), new RegExp(`^${collection}:\\d+$`))
    assert.isFalse(places.has(r.ref), `${String(r.ref)} twice`)
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(r)) {
      if (k === "ref") continue
      if (k.endsWith("_ref")) {
        assert.isTrue(places.has(v), `${String(r.ref)}.${k} names ${String(v)}, no earlier record`)
        out[k] = places.get(v)
      } else out[k] = v
    }
    const index = counts[collection] ?? 0
    const place = `${collection}#${index}`
    counts[collection] = index + 1
    places.set(r.ref, place)
    return { ref: place, ...out }
  }
}

/** The document with its records as their places (`placer`): equal documents are equal but for ids. */
export const placed = (doc: Doc): Doc => {
  const place = placer()
  return Object.fromEntries(Object.entries(doc).map(([collection, records]) => [collection, records.map((r) => place(collection, r))]))
}

/**
 * The records of an export document read from its file one line at a time, as `chamber export`
 * writes it (`{`, then `"members": [` and a record a line for each collection, `]`, `}`), without
 * holding the document: any other line fails.
 */
export async function* exportedRecords(file: string): AsyncGenerator<{ readonly collection: string; readonly record: Record<string, unknown> }> {
  let collection: string | undefined
  let ended = false
  let n = 0
  for await (const line of createInterface({ input: createReadStream(file, "utf8"), crlfDelay: Infinity })) {
    n++
    const opening = /^"([a-z_]+)": \[$/.exec(line)
    if (n === 1) assert.strictEqual(line, "{", `${file} line 1`)
    else if (ended) assert.fail(`${file} line ${n} after the document's end: ${line.slice(0, 200)}`)
    else if (opening !== null) collection = opening[1]
    else if (line === "],") collection = undefined
    else if (line === "]") collection = undefined
    else if (line === "}") ended = true
    else if (collection !== undefined && line.startsWith("{")) yield { collection, record: JSON.parse(line.endsWith(",") ? line.slice(0, -1) : line) }
    else assert.fail(`${file} line ${n}: ${line.slice(0, 200)}`)
  }
  assert.isTrue(ended, `${file} ends before the document does`)
}

/**
 * Asserts the export files `a` and `b` hold the same document but for ids: the same records,
 * field for field, in the same order and collections, each naming the same records; read side
 * by side a record at a time. Returns the records of `a` by collection, in order, where `keep`
 * says so (all of them unless given).
 */
export const sameButForIds = async (a: string, b: string, keep: (collection: string, index: number, record: Record<string, unknown>) => boolean = () => true) => {
  const [left, right] = [exportedRecords(a), exportedRecords(b)]
  const [placeA, placeB] = [placer(), placer()]
  const kept: Doc = {}
  const counts: Record<string, number> = {}
  for (;;) {
    const [x, y] = await Promise.all([left.next(), right.next()])
    if (x.done === true || y.done === true) {
      assert.isTrue(x.done === true && y.done === true, x.done === true ? `${b} has more: ${JSON.stringify(y.value)}` : `${a} has more: ${JSON.stringify(x.value)}`)
      return { counts, kept }
    }
    const index = counts[x.value.collection] ?? 0
    const [ra, rb] = [placeA(x.value.collection, x.value.record), placeB(y.value.collection, y.value.record)]
    if (x.value.collection !== y.value.collection || !isDeepStrictEqual(ra, rb)) {
      assert.deepStrictEqual({ collection: y.value.collection, record: rb }, { collection: x.value.collection, record: ra }, `${x.value.collection}[${index}] differs`)
    }
    counts[x.value.collection] = index + 1
    if (keep(x.value.collection, index, x.value.record)) (kept[x.value.collection] ??= []).push(x.value.record)
  }
}

/** How many contacts `generated(members)` makes: 150 for 1,100 members, as many to a member for more. */
const contactsOf = (members: number) => Math.round(members * 3 / 22)

/**
 * An import document of `members` members (1,100 is past one export page of 1,000) with custom
 * fields, contacts of some (subscribers among them), events in every state with registrations,
 * deals that have ended, invoices in every state with payments, some voided or marked
 * uncollectible after them, sponsorships, placements and bookings.
 */
export const generated = (members = 1_100): Doc => {
  const statuses = ["active", "pending", "lapsed", "former"]
  const memberRecords = Array.from({ length: members }, (_, i) => ({
    ref: `m${i}`,
    name: i % 97 === 0 ? `Member "${i}", Inc.\nBranch` : `Member ${i}`,
    status: statuses[i % 4],
    email: `m${i}@example.com`,
    employee_count: i % 50,
    directory_visible: i % 2 === 0,
    ...(i % 7 === 0 ? { secondary_industries: ["Retail", "Wholesale"] } : {}),
    ...(i % 11 === 0 ? { slogan: "" } : {}),
    custom_fields: i % 3 === 0 ? { tier: ["Gold", "Silver"][i % 2], notes: "hidden" } : i % 5 === 0 ? { tier: "", rank: 3 } : {}
  }))
  // Every tenth is subscribed to the newsletter; every thirtieth one a subscriber without names, as POST /subscribers makes them.
  const contacts = Array.from({ length: contactsOf(members) }, (_, i) => ({
    ref: `c${i}`,
    first_name: i % 30 === 1 ? "" : `First${i}`,
    last_name: i % 30 === 1 ? "" : i % 13 === 0 ? "O'Brien, Jr." : `Last${i}`,
    ...(i % 4 === 0 ? {} : { member_ref: `m${i * 6}` }),
    ...(i % 10 === 1 ? { subscribed: true, email: `c${i}@example.com` } : {}),
    custom_fields: i % 2 === 0 ? { topic: "events" } : {}
  }))
  const events = [
    { ref: "e0", title: "Gala", starts_at: "2027-01-10T18:00:00Z", status: "published", capacity: 200 },
    { ref: "e1", title: "Mixer", starts_at: "2025-03-10T18:00:00Z", ends_at: "2025-03-10T20:00:00Z", status: "completed" },
    { ref: "e2", title: "Picnic", starts_at: "2027-06-10T12:00:00Z", status: "cancelled" }
  ]
  const registrations = [
    ...Array.from({ length: 30 }, (_, i) => ({ event_ref: "e0", member_ref: `m${i}`, ...(i % 3 === 0 ? { contact_ref: `c${i}` } : {}) })),
    // On the past and the cancelled event: attended, cancelled.
    { event_ref: "e1", member_ref: "m1", status: "attended", registered_at: "2025-03-01T10:00:00.000Z", checked_in_at: "2025-03-10T18:05:00.000Z" },
    { event_ref: "e2", member_ref: "m2", status: "cancelled" }
  ]
  // Deals that have ended (in the past, and today), one running, one rejected: an ended one is history the import takes.
  const today = new Date().toISOString().slice(0, 10)
  const deals = [
    { ref: "d0", member_ref: "m3", title: "Spring sale", starts_at: "2024-03-01T00:00:00.000Z", ends_at: "2024-04-01T00:00:00.000Z", status: "approved" },
    { ref: "d1", member_ref: "m4", title: "Lunch special", ends_at: `${today}T23:00:00.000Z`, status: "approved", audience: "members" },
    { ref: "d2", member_ref: "m5", title: "Free consult", ends_at: "2099-01-01T00:00:00.000Z", discount_label: "Free", is_featured: true },
    { ref: "d3", member_ref: "m6", title: "Too good", status: "rejected", cta_url: "https://m6.example/deal" }
  ]
  const invoiceStatuses = ["open", "draft", "void", "uncollectible", "open"]
  const invoices: Array<Record<string, unknown>> = Array.from({ length: 40 }, (_, i) => ({
    ref: `i${i}`,
    member_ref: `m${i * 10}`,
    status: invoiceStatuses[i % 5],
    lines: [{ description: "Dues", unit: "450.00" }, { description: "Listing", unit: "12.50", quantity: 2 }],
    ...(i % 2 === 0 ? { memo: "Thank you" } : {})
  }))
  // Issued, paid in part, then voided or marked uncollectible: their payments follow them.
  invoices.push(
    { ref: "i40", member_ref: "m7", status: "void", number: "INV-000900", lines: [{ description: "Dues", unit: "300.00" }] },
    { ref: "i41", member_ref: "m8", status: "uncollectible", lines: [{ description: "Dues", unit: "300.00" }] }
  )
  // Invoices 0, 4, 10, 14 … are open: some paid in full, some in part.
  const payments = [
    ...invoices.filter((inv) => inv.status === "open").slice(0, 8).map((inv, i) => ({
      invoice_ref: inv.ref,
      method: "check",
      amount: i % 2 === 0 ? "475.00" : "100.00",
      reference: `Check #${i}`
    })),
    { invoice_ref: "i40", method: "check", amount: "100.00", received_on: "2025-02-01" },
    { invoice_ref: "i41", method: "card", amount: "50.00", gateway: "stripe" },
    { invoice_ref: "i41", method: "cash", amount: "25.00" }
  ]
  // Sponsorships of a tier (on an event, invoiced) and on the logo wall, one fulfilled; a member's ad and a house ad; bookings, one cancelled.
  const sponsorships = [
    { member_ref: "m10", name: "Gold Sponsor", tier: "Gold", status: "active", starts_on: "2026-01-01", ends_on: "2026-12-31", amount_cents: 50000, invoice_ref: "i0", event_ref: "e0", notes: "Logo on the homepage." },
    { member_ref: "m12", name: "Logo wall", kind: "logo_wall", status: "active", ends_on: "2027-06-30", amount_cents: 10000 },
    { member_ref: "m14", name: "Silver Sponsor", tier: "Silver", status: "fulfilled", starts_on: "2024-01-01", ends_on: "2024-12-31", amount_cents: 25000 }
  ]
  const placements = [
    { member_ref: "m16", ad_slot: "homepage-banner", ad_kind: "image", ad_headline: "Fresh bread", ad_image_url: "https://m16.example/ad.png", ad_link_url: "https://m16.example", status: "active", starts_on: "2026-01-01", impressions: 1200, clicks: 31, amount_cents: 30000 },
    { ad_slot: "sidebar", ad_kind: "text", ad_headline: "Join the Chamber", ad_body: "Grow with us.", status: "active", is_house_ad: true, impressions: 900, clicks: 9 }
  ]
  const bookings = [
    { booking_type_name: "Board Room", starts_at: "2027-02-01T16:00:00.000Z", ends_at: "2027-02-01T18:00:00.000Z", status: "confirmed", member_ref: "m0", contact_ref: "c0", visitor_name: "Ann Lee", visitor_email: "ann@m0.example", notes: "Projector" },
    { booking_type_name: "Photo Booth", starts_at: "2027-03-01T17:00:00.000Z", status: "cancelled", cancelled_at: "2026-11-01T12:00:00.000Z", visitor_name: "Marcus Ortiz", visitor_phone: "555-0199" }
  ]
  return {
    fields: [
      { resource: "member", key: "tier", label: "Tier", api_visible: true },
      { resource: "member", key: "notes", label: "Notes", api_visible: false },
      { resource: "contact", key: "topic", label: "Topic" }
    ],
    members: memberRecords,
    contacts,
    events,
    registrations,
    deals,
    invoices,
    payments,
    sponsorships,
    placements,
    bookings
  }
}

/**
 * What the API does to a chamber imported from `generated()` (`ids`: the import's ids by ref),
 * as a `chamber serve` of the suite with a key of `admin`: a subscriber without names, titles
 * changed (slugs stay), a slug taken away, a payment.
 */
export const changedThroughTheApi = (tenant: string, admin: string, ids: Readonly<Record<string, number>>) =>
  Effect.scoped(Effect.gen(function*() {
    const { port } = yield* serving(["--no-relay"])
    const key = json(yield* chamber(["key", "mint", "--tenant", tenant, "--as", admin, "--name", "k", "--scopes", "all", "--json"])).key as string
    for (const [method, path, body, status] of [
      ["POST", "/api/v1/subscribers", { email: "reader@example.com" }, 201],
      ["PATCH", `/api/v1/events/${ids.e0}`, { title: "Winter Gala" }, 200],
      ["PATCH", `/api/v1/deals/${ids.d2}`, { title: "Free consultation", status: "approved" }, 200],
      ["PATCH", `/api/v1/members/${ids.m9}`, { status: "lapsed", slug: null }, 200],
      ["POST", `/api/v1/invoices/${ids.i4}/payments`, { method: "ach", amount: "10.00", received_on: "2026-01-05" }, 201]
    ] as const) {
      const answer = yield* send(port, method, path, key, body)
      assert.strictEqual(answer.status, status, `${method} ${path}: ${JSON.stringify(answer.body)}`)
    }
  }))

/** The counts of an export of a chamber `generated(members)` and then `changedThroughTheApi`. */
export const generatedCounts = (members = 1_100) =>
  ({ fields: 3, members, contacts: contactsOf(members) + 1, events: 3, registrations: 32, deals: 4, invoices: 42, payments: 12, sponsorships: 3, placements: 2, bookings: 2 })

/** Members and contacts past these are not needed to see `everyState` (but for the last contact). */
export const STATES_IN_FIRST = 12

/**
 * Asserts each state of a chamber `generated()` (of any size) and then `changedThroughTheApi` is in its
 * export `doc` (whole, or with only the first `STATES_IN_FIRST` members and contacts and the last
 * contact): a subscriber without names, a slug kept from the old title, ended deals, payments on
 * invoices that ended unpaid, empty strings, hidden and non-text custom fields.
 */
export const everyState = (doc: Doc) => {
  assert.deepInclude(doc.contacts!.at(-1)!, { first_name: "", last_name: "", email: "reader@example.com", subscribed: true })
  assert.deepInclude(doc.contacts![1]!, { first_name: "", subscribed: true })
  assert.strictEqual(doc.contacts![0]!.subscribed, false)
  assert.deepInclude(doc.events![0]!, { title: "Winter Gala", slug: "gala" })
  assert.deepInclude(doc.deals![2]!, { title: "Free consultation", slug: "free-consult", status: "approved" })
  assert.deepInclude(doc.deals![0]!, { ends_at: "2024-04-01T00:00:00.000Z" })
  assert.deepInclude(doc.members![9]!, { status: "lapsed", slug: "" })
  assert.deepInclude(doc.invoices![40]!, { status: "void", number: "INV-000900" })
  assert.deepInclude(doc.invoices![41]!, { status: "uncollectible" })
  const paying = (invoice: Record<string, unknown>) => doc.payments!.filter((p) => p.invoice_ref === invoice.ref).map((p) => p.amount)
  assert.deepStrictEqual([paying(doc.invoices![40]!), paying(doc.invoices![41]!)], [["100.00"], ["50.00", "25.00"]])
  // Kept as given: an empty string, a hidden custom field, a number in custom fields; a fully paid invoice is exported open, with its payment.
  assert.deepStrictEqual(doc.members![0]!.custom_fields, { tier: "Gold", notes: "hidden" })
  assert.strictEqual(doc.members![11]!.slogan, "")
  assert.deepStrictEqual(doc.members![5]!.custom_fields, { tier: "", rank: 3 })
  assert.strictEqual(doc.invoices![0]!.status, "open")
}
