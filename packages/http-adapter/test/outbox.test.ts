/**
 * Every event is written with its change and never without it (docs/api.md "Events"): each
 * operation that fires one, run in a transaction that then fails, leaves neither its row nor its
 * event; run on its own, it leaves both. On every storage runtime.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import {
  Bookings,
  Contacts,
  Deals,
  type EventKind,
  Events,
  Importer,
  Invoices,
  Members,
  Outbox,
  Payments,
  Placements,
  Registrations,
  Sponsorships,
  Transactor
} from "@chamber/core"
import { runtimes } from "@chamber/pg-adapter/testing"
import { chamberWithKey, serverOn } from "./fixture.ts"

const FAILED = "a later step failed" as const

for (const rt of runtimes()) {
  describe(`the outbox on ${rt.name}`, () => {
    layer(serverOn(rt), { timeout: 120_000 })((it) => {
      it.effect("each kind but member.updated: written with its change, gone with its rollback", () =>
        Effect.gen(function*() {
          const { tenant } = yield* chamberWithKey("all")
          const t = tenant.id
          const { ids } = yield* (yield* Importer).run(t, {
            members: [{ ref: "m", name: "Acme", status: "active" }],
            events: [{ ref: "e", title: "Gala", starts_at: "2027-01-10T18:00:00Z", status: "published" }],
            invoices: [
              { ref: "draft", member_ref: "m", lines: [{ description: "Dues", unit: "10.00" }] },
              { ref: "open", member_ref: "m", lines: [{ description: "Dues", unit: "10.00" }], status: "open" },
              { ref: "part", member_ref: "m", lines: [{ description: "Dues", unit: "10.00" }], status: "open" }
            ],
            contacts: [{ ref: "c", first_name: "Ann", last_name: "Lee" }]
          })
          const outbox = yield* Outbox
          const tx = yield* Transactor
          const [members, contacts, events, registrations, deals, invoices, payments, sponsorships, placements, bookings] = [
            yield* Members, yield* Contacts, yield* Events, yield* Registrations, yield* Deals, yield* Invoices, yield* Payments,
            yield* Sponsorships, yield* Placements, yield* Bookings
          ]
          const count = <E>(page: Effect.Effect<{ readonly total: number }, E>, n: number) => page.pipe(Effect.map((p) => p.total === n), Effect.orDie)
          const cases: ReadonlyArray<readonly [EventKind, Effect.Effect<unknown, unknown>, Effect.Effect<boolean>]> = [
            ["contact.created", contacts.create(t, { first_name: "Ann", last_name: "Lee" }), count(contacts.list(t, {}), 2)],
            ["contact.updated", contacts.update(t, ids.c!, { title: "Owner" }),
              contacts.get(t, ids.c!).pipe(Effect.map((c) => c.attributes.title === "Owner"), Effect.orDie)],
            ["event.created", events.create(t, { title: "Mixer", starts_at: "2027-02-10T18:00:00Z" }), count(events.list(t, {}), 2)],
            ["event.updated", events.update(t, ids.e!, { title: "Gala night" }),
              events.get(t, ids.e!).pipe(Effect.map((e) => e.attributes.title === "Gala night"), Effect.orDie)],
            ["invoice.created", invoices.create(t, { member_id: ids.m!, lines: [{ description: "Dues", unit: 500 }] }), count(invoices.list(t, {}), 4)],
            ["payment.created", payments.record(t, ids.part!, { method: "cash", amount: 400 }), count(payments.list(t, {}), 1)],
            ["deal.created", deals.create(t, { member_id: ids.m!, title: "Pending deal" }), count(deals.list(t, {}), 1)],
            ["sponsorship.created", sponsorships.create(t, { name: "Gold", status: "active", starts_on: "2026-01-01" }), count(sponsorships.list(t, {}), 1)],
            ["placement.created", placements.create(t, { ad_headline: "Hi", status: "active" }), count(placements.list(t, {}), 1)],
            ["booking.created", bookings.create(t, { booking_type_name: "Room", starts_at: "2027-01-01T09:00:00Z" }), count(bookings.list(t, {}), 1)],
            ["event.registration.created", registrations.create(t, ids.e!, { first_name: "Ann" }),
              registrations.listForEvent(t, ids.e!).pipe(Effect.map((p) => p.total > 0), Effect.orDie)],
            ["deal.approved", deals.create(t, { member_id: ids.m!, title: "Deal", status: "approved" }), count(deals.list(t, {}), 2)],
            ["invoice.issued", invoices.issue(t, ids.draft!),
              invoices.get(t, ids.draft!).pipe(Effect.map((i) => i.attributes.status === "open"), Effect.orDie)],
            ["invoice.paid", payments.record(t, ids.open!, { method: "cash", amount: 1000 }),
              invoices.get(t, ids.open!).pipe(Effect.map((i) => i.attributes.status === "paid"), Effect.orDie)]
          ]
          // The setup's own events (the open invoice was issued) stay as they are.
          const before = yield* outbox.list(t)
          const countOf = (kind: EventKind) => outbox.list(t, { type: kind }).pipe(Effect.map((events) => events.length))
          for (const [kind, change, changed] of cases) {
            const had = yield* countOf(kind)
            const failed = yield* tx.withTransaction(Effect.andThen(change, Effect.fail(FAILED))).pipe(Effect.flip)
            assert.strictEqual(failed, FAILED, kind)
            assert.isFalse(yield* changed, `${kind}: the change was rolled back`)
            assert.strictEqual(yield* countOf(kind), had, `${kind}: no event without its change`)
          }
          assert.deepStrictEqual(yield* outbox.list(t), before)
          for (const [kind, change, changed] of cases) {
            const had = yield* countOf(kind)
            yield* Effect.orDie(change)
            assert.isTrue(yield* changed, kind)
            assert.strictEqual(yield* countOf(kind), had + 1, kind)
          }
          // member.created likewise, through the same transaction boundary.
          yield* tx.withTransaction(Effect.andThen(members.create(t, { name: "Gone", status: "active" }), Effect.fail(FAILED))).pipe(Effect.flip)
          assert.deepStrictEqual((yield* members.list(t, {})).rows.map((m) => m.attributes.name), ["Acme"])
          assert.lengthOf(yield* outbox.list(t, { type: "member.created" }), 1)
        }))
    })
  })
}
