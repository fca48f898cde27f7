/**
 * The events desk's nightly job: a program of another team that embeds the Chamber core library
 * with the pg-adapter's storage and no HTTP (docs/embedding.md). It does what the API does not
 * offer: registers the kiosk's walk-ins for the next event, records the payments the card gateway
 * settled, books the sponsorship, ad and room the desk sold, and closes the events that are over.
 *
 *   node packages/embedding-example/src/main.ts chm_…   (DATABASE_URL, else the embedded database)
 */
import { Effect } from "effect"
import { Bookings, Events, Invoices, Payments, Placements, Registrations, Sponsorships, Tenants } from "@chamber/core"
import { databaseConfigFromEnv, StorageLive } from "@chamber/pg-adapter"

const nightly = (chamberId: string) =>
  Effect.gen(function*() {
    const chamber = yield* (yield* Tenants).get(chamberId)
    const events = yield* Events
    const invoices = yield* Invoices
    const payments = yield* Payments
    const registrations = yield* Registrations
    const now = new Date().toISOString()

    // The kiosk's walk-ins, registered for the next published event: each fires event.registration.created.
    const upcoming = (yield* events.list(chamber.id, { sort: "starts_at" })).rows
      .filter((e) => e.attributes.status === "published" && e.attributes.starts_at > now)
    const next = upcoming[0]
    const walkIns = next === undefined ? [] : yield* Effect.forEach([["Dana", "Cho"], ["Eli", "Park"]] as const, ([first, last]) =>
      registrations.create(chamber.id, next.id, { first_name: first, last_name: last, source: "kiosk" }))

    // Settled card payments: the whole balance of each open invoice the gateway reported. The one
    // that clears an invoice makes it paid and fires invoice.paid. An invoice paid meanwhile by
    // check is skipped, not an error.
    const open = (yield* invoices.list(chamber.id, { status: "open" })).rows
    const settled = yield* Effect.forEach(open, (invoice) =>
      payments.recordGateway(chamber.id, invoice.id, {
        method: "card",
        amount_cents: invoice.attributes.balance_cents,
        gateway: "stripe",
        reference: `ch_nightly_${invoice.id}`,
        received_on: now.slice(0, 10)
      }).pipe(
        Effect.map((payment) => ({ invoice: invoice.id, amount_cents: payment.attributes.amount_cents })),
        Effect.catchTags({ Overpayment: () => Effect.succeed(undefined), InvoiceNotOpen: () => Effect.succeed(undefined) })
      ))

    // What the desk sold today: rows only the core makes, with fields the API never shows.
    const sponsor = yield* (yield* Sponsorships).create(chamber.id, {
      name: "Nightly Silver",
      tier: "Silver",
      status: "active",
      starts_on: now.slice(0, 10),
      amount_cents: 25_000,
      notes: "Sold at the front desk"
    })
    const ad = yield* (yield* Placements).create(chamber.id, {
      ad_slot: "newsletter",
      ad_kind: "text",
      ad_headline: "Visit the Chamber",
      ad_body: "Open weekdays 9 to 5.",
      status: "active",
      is_house_ad: true
    })
    const room = yield* (yield* Bookings).create(chamber.id, {
      booking_type_name: "Board Room",
      starts_at: new Date(Date.now() + 3 * 86_400_000).toISOString(),
      status: "confirmed",
      visitor_name: "Front desk hold"
    })

    // Events that are over are completed; only the service may set that status.
    const over = (yield* events.list(chamber.id, { sort: "starts_at" })).rows
      .filter((e) => e.attributes.status === "published" && (e.attributes.ends_at ?? e.attributes.starts_at) < now)
    const completed = yield* Effect.forEach(over, (e) => events.end(chamber.id, e.id, "completed"))

    return {
      chamber: chamber.public_id,
      registered: walkIns.map((r) => r.id),
      paid: settled.filter((s) => s !== undefined),
      sold: { sponsorship: sponsor.id, placement: ad.id, booking: room.id },
      completed: completed.map((e) => e.id)
    }
  })

const chamberId = process.argv[2]
if (chamberId === undefined) {
  console.error("usage: main.ts <chamber id>")
  process.exit(2)
}
const exit = await Effect.runPromiseExit(nightly(chamberId).pipe(Effect.provide(StorageLive(databaseConfigFromEnv())), Effect.scoped))
if (exit._tag === "Failure") {
  console.error(`nightly job failed: ${exit.cause}`)
  process.exit(1)
}
console.log(JSON.stringify(exit.value))
