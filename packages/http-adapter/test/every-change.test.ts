/**
 * Every change is an event (ruling 34, docs/webhooks.md "Event kinds"), over HTTP on a real
 * socket, on every storage runtime: each write that makes a change fires exactly the events the
 * ruling names, in order, each with the resource as its list item shows it after that step, in
 * the change feed and to a subscription of the kind; a write that changes nothing shown fires
 * none; the importer fires the same; a key without a resource's read scope never sees its events.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { ALL_SCOPES, Bookings, Contacts, Deals, type EventKind, Events, Importer, Invoices, KIND_SCOPES, Placements, Sponsorships } from "@chamber/core"
import { runtimes } from "@chamber/pg-adapter/testing"
import { anotherKey, call, chamberWithKey, serverOn } from "./fixture.ts"

/** The kinds ruling 34 adds to the spec's seven. */
const NEW_KINDS: ReadonlyArray<EventKind> = [
  "contact.updated",
  "event.created",
  "event.updated",
  "invoice.created",
  "invoice.updated",
  "payment.created",
  "deal.created",
  "deal.updated",
  "sponsorship.created",
  "placement.created",
  "booking.created"
]

const DAY = 86_400_000
const today = () => new Date().toISOString().slice(0, 10)

const ok = (reply: { readonly status: number; readonly body: any; readonly text: string }, status: number) => {
  assert.strictEqual(reply.status, status, reply.text)
  return reply.body
}

/** The item of list `path` (every page) whose id is `id`: the resource as its list item shows it. */
const listed = (key: string, path: string, id: number) =>
  Effect.gen(function*() {
    for (let page = 1; ; page++) {
      const body = ok(yield* call("GET", `${path}${path.includes("?") ? "&" : "?"}page=${page}`, { key }), 200)
      const found = body.data.find((item: any) => item.id === id)
      if (found !== undefined) return found
      if (page >= body.meta.last_page) return assert.fail(`${path} does not list ${id}`)
    }
  })

/**
 * A reader of the chamber's feed from now: `fired` answers the events committed since its last
 * call, as `[type, data]`, and keeps every one of the new kinds it saw.
 */
const feedFromNow = (key: string) =>
  Effect.gen(function*() {
    let cursor: string = ok(yield* call("GET", "/api/v1/changes?after=head", { key }), 200).meta.next_cursor
    const seen: Array<{ readonly id: string; readonly type: string }> = []
    const fired = Effect.gen(function*() {
      const body = ok(yield* call("GET", `/api/v1/changes?after=${cursor}`, { key }), 200)
      assert.isFalse(body.meta.has_more)
      cursor = body.meta.next_cursor
      for (const e of body.data) if (NEW_KINDS.includes(e.type)) seen.push({ id: e.id, type: e.type })
      return body.data.map((e: any) => [e.type, e.data]) as Array<[string, any]>
    })
    return { fired, seen }
  })

/** Every delivery of subscription `hook`, as `{id, type}` of its event. */
const deliveriesOf = (key: string, hook: number) =>
  Effect.gen(function*() {
    const out: Array<{ readonly id: string; readonly type: string }> = []
    for (let page = 1; ; page++) {
      const body = ok(yield* call("GET", `/api/v1/hooks/${hook}/deliveries?page=${page}`, { key }), 200)
      out.push(...body.data.map((d: any) => ({ id: d.attributes.event_id, type: d.attributes.type })))
      if (page >= body.meta.last_page) return out
    }
  })

/** One record of each collection, each a change the ruling names. */
const everyCollection = () => ({
  members: [{ ref: "m", name: "Acme", status: "active" }],
  contacts: [{ ref: "c", first_name: "Ann", last_name: "Lee", member_ref: "m" }],
  events: [
    { ref: "e", title: "Gala", starts_at: "2027-01-10T18:00:00Z", status: "published" },
    { ref: "x", title: "Called off", starts_at: "2027-02-10T18:00:00Z", status: "cancelled" }
  ],
  deals: [{ ref: "d", member_ref: "m", title: "Free consult", status: "approved" }],
  invoices: [
    { ref: "i", member_ref: "m", lines: [{ description: "Dues", unit: "300.00" }], status: "open" },
    { ref: "v", member_ref: "m", lines: [{ description: "Dues", unit: "50.00" }], status: "void" }
  ],
  payments: [{ invoice_ref: "i", method: "check", amount: "100.00" }, { invoice_ref: "i", method: "card", amount: "200.00", gateway: "stripe" }],
  sponsorships: [{ member_ref: "m", name: "Gold", status: "active", starts_on: "2026-01-01" }],
  placements: [{ member_ref: "m", ad_kind: "text", ad_headline: "Hi", status: "active" }],
  bookings: [{ booking_type_name: "Room A", starts_at: new Date(Date.now() + 3 * DAY).toISOString(), status: "confirmed", member_ref: "m" }]
})

for (const rt of runtimes()) {
  describe(`every change is an event on ${rt.name}`, () => {
    layer(serverOn(rt), { timeout: 120_000 })((it) => {
      it.effect("each API and core write fires exactly its events, in order, with the resource as listed, in the feed and to a subscription; a write that changes nothing shown fires none", () =>
        Effect.gen(function*() {
          const { tenant, key } = yield* chamberWithKey("all")
          const t = tenant.id
          const hook = ok(yield* call("POST", "/api/v1/hooks", { key, body: { url: "https://hooks.example.com/every", events: NEW_KINDS } }), 201)
          assert.sameMembers(hook.events, [...NEW_KINDS])
          const paymentsOnly = ok(yield* call("POST", "/api/v1/hooks", { key, body: { url: "https://hooks.example.com/payments", events: ["payment.created"] } }), 201)
          const { fired, seen } = yield* feedFromNow(key)
          const member = ok(yield* call("POST", "/api/v1/members", { key, body: { name: "Acme", status: "active" } }), 201).data
          yield* fired

          // Contacts: a change shown fires contact.updated; the same values again, none.
          const contact = ok(yield* call("POST", "/api/v1/contacts", { key, body: { first_name: "Ann", last_name: "Lee" } }), 201).data
          assert.deepStrictEqual(yield* fired, [["contact.created", contact]])
          const edited = ok(yield* call("PATCH", `/api/v1/contacts/${contact.id}`, { key, body: { title: "Owner" } }), 200).data
          assert.deepStrictEqual(yield* fired, [["contact.updated", yield* listed(key, "/api/v1/contacts", contact.id)]])
          assert.strictEqual(edited.attributes.title, "Owner")
          ok(yield* call("PATCH", `/api/v1/contacts/${contact.id}`, { key, body: { title: "Owner", first_name: "Ann" } }), 200)
          assert.deepStrictEqual(yield* fired, [])
          // A custom field the chamber does not show is stored, and changes nothing shown.
          yield* (yield* Contacts).update(t, contact.id, { custom_fields: { internal_score: 7 } }).pipe(Effect.orDie)
          assert.deepStrictEqual(yield* fired, [])

          // Subscribers: new (201) contact.created; subscribed again (201) contact.updated; already (200) none.
          const subscribe = () => call("POST", "/api/v1/subscribers", { key, body: { email: "sub@acme.example" } })
          const subscriber = ok(yield* subscribe(), 201).data
          assert.deepStrictEqual((yield* fired).map(([type]) => type), ["contact.created"])
          yield* (yield* Contacts).unsubscribe(t, subscriber.id).pipe(Effect.orDie)
          assert.deepStrictEqual(yield* fired, [])
          ok(yield* subscribe(), 201)
          assert.deepStrictEqual(yield* fired, [["contact.updated", yield* listed(key, "/api/v1/contacts", subscriber.id)]])
          ok(yield* subscribe(), 200)
          assert.deepStrictEqual(yield* fired, [])

          // Events: created; a change shown (published, rescheduled) updated; a write-only field or the same values, none; ended by the core, updated.
          const event = ok(yield* call("POST", "/api/v1/events", { key, body: { title: "Gala", starts_at: "2027-01-10T18:00:00Z" } }), 201).data
          assert.deepStrictEqual(yield* fired, [["event.created", event]])
          assert.deepStrictEqual(event, yield* listed(key, "/api/v1/events", event.id))
          ok(yield* call("PATCH", `/api/v1/events/${event.id}`, { key, body: { status: "published", starts_at: "2027-01-11T18:00:00Z" } }), 200)
          const published = yield* listed(key, "/api/v1/events", event.id)
          assert.deepStrictEqual(yield* fired, [["event.updated", published]])
          assert.deepInclude(published.attributes, { status: "published", starts_at: "2027-01-11T18:00:00.000Z" })
          ok(yield* call("PATCH", `/api/v1/events/${event.id}`, { key, body: { description: "Dinner and dancing." } }), 200)
          ok(yield* call("PATCH", `/api/v1/events/${event.id}`, { key, body: { title: "Gala", status: "published" } }), 200)
          assert.deepStrictEqual(yield* fired, [])
          const cancelled = yield* (yield* Events).end(t, event.id, "cancelled").pipe(Effect.orDie)
          assert.deepStrictEqual(yield* fired, [["event.updated", cancelled]])

          // Invoices and payments: a draft, issued, paid in part, then in full; voided by the core.
          const draft = ok(yield* call("POST", "/api/v1/invoices", { key, body: { member_id: member.id, lines: [{ description: "Dues", unit: "300.00" }] } }), 201).data
          assert.deepStrictEqual(yield* fired, [["invoice.created", yield* listed(key, "/api/v1/invoices", draft.id)]])
          const issued = ok(yield* call("POST", `/api/v1/invoices/${draft.id}/issue`, { key }), 200).data
          assert.deepStrictEqual(yield* fired, [["invoice.updated", issued], ["invoice.issued", issued]])
          assert.deepStrictEqual(issued, yield* listed(key, "/api/v1/invoices", draft.id))
          const pay = (amount: string) => call("POST", `/api/v1/invoices/${draft.id}/payments`, { key, body: { method: "check", amount } })
          const part = ok(yield* pay("100.00"), 201).data
          const partly = yield* listed(key, "/api/v1/invoices", draft.id)
          assert.deepStrictEqual(yield* fired, [["payment.created", yield* listed(key, "/api/v1/payments", part.id)], ["invoice.updated", partly]])
          assert.deepInclude(partly.attributes, { status: "open", balance_cents: 20000 })
          const rest = ok(yield* pay("200.00"), 201).data
          const paid = yield* listed(key, "/api/v1/invoices", draft.id)
          assert.deepStrictEqual(yield* fired, [["payment.created", yield* listed(key, "/api/v1/payments", rest.id)], ["invoice.updated", paid], ["invoice.paid", paid]])
          const other = yield* (yield* Invoices).create(t, { member_id: member.id, lines: [{ description: "Dues", unit: 5000 }] }).pipe(Effect.orDie)
          const voided = yield* (yield* Invoices).void(t, other.id).pipe(Effect.orDie)
          assert.deepStrictEqual(yield* fired, [["invoice.created", other], ["invoice.updated", voided]])

          // Deals: created; created approved, then approved; a change shown updated (approving: then deal.approved); a write-only field or nothing, none.
          const deal = ok(yield* call("POST", "/api/v1/deals", { key, body: { member_id: member.id, title: "Free consult" } }), 201).data
          assert.deepStrictEqual(yield* fired, [["deal.created", deal]])
          assert.deepStrictEqual(deal, yield* listed(key, "/api/v1/deals", deal.id))
          const approved = ok(yield* call("POST", "/api/v1/deals", { key, body: { member_id: member.id, title: "Approved", status: "approved" } }), 201).data
          assert.deepStrictEqual(yield* fired, [["deal.created", approved], ["deal.approved", approved]])
          const renamed = ok(yield* call("PATCH", `/api/v1/deals/${deal.id}`, { key, body: { title: "Free consultation" } }), 200).data
          assert.deepStrictEqual(yield* fired, [["deal.updated", renamed]])
          assert.deepStrictEqual(renamed, yield* listed(key, "/api/v1/deals", deal.id))
          const nowApproved = ok(yield* call("PATCH", `/api/v1/deals/${deal.id}`, { key, body: { status: "approved" } }), 200).data
          assert.deepStrictEqual(yield* fired, [["deal.updated", nowApproved], ["deal.approved", nowApproved]])
          ok(yield* call("PATCH", `/api/v1/deals/${deal.id}`, { key, body: { terms: "One per customer." } }), 200)
          ok(yield* call("PATCH", `/api/v1/deals/${deal.id}`, { key, body: { title: "Free consultation", status: "approved" } }), 200)
          assert.deepStrictEqual(yield* fired, [])

          // Sponsorships, placements, bookings: made by the core library only.
          const sponsorship = yield* (yield* Sponsorships).create(t, { member_id: member.id, name: "Gold", status: "active", starts_on: today(), amount_cents: 50_000 }).pipe(Effect.orDie)
          assert.deepStrictEqual(yield* fired, [["sponsorship.created", yield* listed(key, "/api/v1/sponsorships", sponsorship.id)]])
          const placement = yield* (yield* Placements).create(t, { member_id: member.id, ad_headline: "Spring sale", status: "active", notes: "Paid" }).pipe(Effect.orDie)
          assert.deepStrictEqual(yield* fired, [["placement.created", yield* listed(key, "/api/v1/placements", placement.id)]])
          const booking = yield* (yield* Bookings).create(t, {
            booking_type_name: "Board Room",
            starts_at: new Date(Date.now() + 3 * DAY).toISOString(),
            status: "confirmed",
            visitor_name: "Front desk"
          }).pipe(Effect.orDie)
          assert.deepStrictEqual(yield* fired, [["booking.created", yield* listed(key, "/api/v1/bookings", booking.id)]])

          // A derived change (the member's new name, shown in its sponsorship) fires only the member's own event.
          const renamedMember = ok(yield* call("PATCH", `/api/v1/members/${member.id}`, { key, body: { name: "Acme & Sons" } }), 200).data
          assert.deepStrictEqual(yield* fired, [["member.updated", renamedMember]])
          assert.strictEqual((yield* listed(key, "/api/v1/sponsorships", sponsorship.id)).attributes.member_name, "Acme & Sons")

          // Every kind fired, each event once to the subscription.
          assert.sameMembers([...new Set(seen.map((e) => e.type))], [...NEW_KINDS])
          assert.sameDeepMembers(yield* deliveriesOf(key, hook.id), seen)
          assert.lengthOf(yield* deliveriesOf(key, hook.id), seen.length)
          // A subscription of one kind gets that kind alone.
          assert.sameDeepMembers(yield* deliveriesOf(key, paymentsOnly.id), seen.filter((e) => e.type === "payment.created"))
          assert.lengthOf(yield* deliveriesOf(key, paymentsOnly.id), 2)
        }))

      it.effect("the importer fires the same: one event per step, in order, each with the resource as it stood after it; the last of each resource as its list item shows it", () =>
        Effect.gen(function*() {
          const { tenant, key } = yield* chamberWithKey("all")
          const hook = ok(yield* call("POST", "/api/v1/hooks", { key, body: { url: "https://hooks.example.com/import", events: NEW_KINDS } }), 201)
          const { fired, seen } = yield* feedFromNow(key)
          const { ids } = yield* (yield* Importer).run(tenant.id, everyCollection())
          const events = yield* fired
          assert.deepStrictEqual(events.map(([type]) => type), [
            "member.created",
            "contact.created",
            "event.created",
            "event.created",
            "event.updated",
            "deal.created",
            "deal.approved",
            "invoice.created",
            "invoice.updated",
            "invoice.issued",
            "invoice.created",
            "invoice.updated",
            "payment.created",
            "invoice.updated",
            "payment.created",
            "invoice.updated",
            "invoice.paid",
            "sponsorship.created",
            "placement.created",
            "booking.created"
          ])
          const statuses = (id: number) => events.filter(([type, data]) => type.startsWith("invoice.") && data.id === id).map(([type, data]) => [type, data.attributes.status, data.attributes.balance_cents])
          assert.deepStrictEqual(statuses(ids.i!), [
            ["invoice.created", "draft", 30000],
            ["invoice.updated", "open", 30000],
            ["invoice.issued", "open", 30000],
            ["invoice.updated", "open", 20000],
            ["invoice.updated", "paid", 0],
            ["invoice.paid", "paid", 0]
          ])
          assert.deepStrictEqual(statuses(ids.v!), [["invoice.created", "draft", 5000], ["invoice.updated", "void", 5000]])
          const cancelled = events.filter(([type, data]) => type.startsWith("event.") && data.id === ids.x).map(([type, data]) => [type, data.attributes.status])
          assert.deepStrictEqual(cancelled, [["event.created", "published"], ["event.updated", "cancelled"]])
          // The last event of each resource carries it as listed now.
          const lists: Record<string, string> = {
            contact: "/api/v1/contacts",
            event: "/api/v1/events",
            deal: "/api/v1/deals",
            invoice: "/api/v1/invoices",
            payment: "/api/v1/payments",
            sponsorship: "/api/v1/sponsorships",
            placement: "/api/v1/placements",
            booking: "/api/v1/bookings"
          }
          const last = new Map<string, any>()
          for (const [type, data] of events) if (type !== "member.created") last.set(`${type.split(".")[0]}/${data.id}`, data)
          for (const [resource, data] of last) assert.deepStrictEqual(data, yield* listed(key, lists[resource.split("/")[0]!]!, data.id), resource)
          assert.sameDeepMembers(yield* deliveriesOf(key, hook.id), seen)
          assert.lengthOf(yield* deliveriesOf(key, hook.id), seen.length)
        }))

      it.effect("a key without a resource's read scope never sees its events in the feed; naming one is a 403 naming that scope", () =>
        Effect.gen(function*() {
          const { tenant } = yield* chamberWithKey("all")
          const { ids } = yield* (yield* Importer).run(tenant.id, everyCollection())
          // An import creates (and ends, issues, pays); a contact's and a deal's updates are the kinds left.
          yield* (yield* Contacts).update(tenant.id, ids.c!, { title: "Owner" }).pipe(Effect.orDie)
          yield* (yield* Deals).update(tenant.id, ids.d!, { title: "Free consultation" }).pipe(Effect.orDie)
          const readScopes = ALL_SCOPES.filter((s) => s.endsWith(":read"))
          for (const scope of new Set(NEW_KINDS.map((k) => KIND_SCOPES[k]))) {
            const key = yield* anotherKey(tenant.id, readScopes.filter((s) => s !== scope).join(","))
            const body = ok(yield* call("GET", "/api/v1/changes", { key }), 200)
            const kinds = new Set<EventKind>(body.data.map((e: any) => e.type))
            assert.isNotEmpty(kinds, scope)
            for (const kind of kinds) assert.notStrictEqual(KIND_SCOPES[kind], scope, `${kind} seen without ${scope}`)
            for (const kind of NEW_KINDS.filter((k) => KIND_SCOPES[k] === scope)) {
              const refused = yield* call("GET", `/api/v1/changes?types=${kind}`, { key })
              assert.deepStrictEqual([refused.status, refused.body], [403, { message: `This key lacks the ${scope} scope.` }], kind)
            }
            // With the scope, its kinds are there.
            const all = ok(yield* call("GET", "/api/v1/changes", { key: yield* anotherKey(tenant.id, scope) }), 200)
            assert.includeMembers(all.data.map((e: any) => e.type), NEW_KINDS.filter((k) => KIND_SCOPES[k] === scope), scope)
          }
        }))
    })
  })
}
