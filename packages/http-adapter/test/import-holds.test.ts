/**
 * An import written in slices under a hold (docs/architecture.md "On the embedded database: slices
 * under a hold"), seen through the API over a socket on the embedded database: every row of every
 * resource the hold marks is absent from every read the contract has and refused by every route
 * that names it, the chamber's feed stops at the hold's fence and then gives every event once, in
 * order, the relay claims none of its deliveries, and a discarded, swept or interrupted import
 * leaves nothing behind, not even an invoice number. On PostgreSQL an import is one transaction:
 * nothing is sliced, and an import is shown whole when it commits.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as SqlClient from "effect/sql/SqlClient"
import { spawn } from "node:child_process"
import {
  Bookings,
  Contacts,
  Deals,
  DeliveryStore,
  EventKinds,
  Events,
  Exporter,
  type ExportRecord,
  Importer,
  ImportHolds,
  Invoices,
  Members,
  Payments,
  Placements,
  Registrations,
  Sponsorships,
  Tenants
} from "@chamber/core"
import { DeliveryStoreSql } from "@chamber/pg-adapter"
import { pgliteRuntime, runtimes } from "@chamber/pg-adapter/testing"
import { endpoints, referenceCollection } from "./endpoints.ts"
import { call, chamberWithKey, serverOn } from "./fixture.ts"
import { hoursFromNow } from "./feeds.ts"

/** One row of every resource an import writes, each carrying `tag` (names, titles, emails) where it has text, through the core services. */
const seed = (tenantId: number, tag: string) =>
  Effect.gen(function*() {
    const lower = tag.toLowerCase()
    const member = yield* (yield* Members).create(tenantId, { name: `${tag} Member`, status: "active", email: `${lower}@member.example` })
    const contact = yield* (yield* Contacts).create(tenantId, { first_name: tag, last_name: "Contact", email: `${lower}@contact.example` })
    const event = yield* (yield* Events).create(tenantId, { title: `${tag} Event`, status: "published", starts_at: hoursFromNow(48) })
    const registration = yield* (yield* Registrations).create(tenantId, event.id, { first_name: tag, last_name: "Guest", email: `${lower}@guest.example` })
    const deal = yield* (yield* Deals).create(tenantId, { member_id: member.id, title: `${tag} Deal`, status: "approved", ends_at: hoursFromNow(24 * 400) })
    const invoices = yield* Invoices
    const invoice = yield* invoices.create(tenantId, { member_id: member.id, lines: [{ description: `${tag} dues`, unit: 10_000, quantity: 1 }] })
    const issued = yield* invoices.issue(tenantId, invoice.id)
    const payment = yield* (yield* Payments).record(tenantId, invoice.id, { method: "check", amount: 4_000, reference: tag })
    const sponsorship = yield* (yield* Sponsorships).create(tenantId, { name: `${tag} Sponsorship`, status: "active", member_id: member.id })
    const placement = yield* (yield* Placements).create(tenantId, { ad_slot: `${tag} slot`, ad_headline: `${tag} ad`, status: "active" })
    const booking = yield* (yield* Bookings).create(tenantId, { booking_type_name: `${tag} Room`, starts_at: hoursFromNow(24) })
    return {
      ids: { member: member.id, contact: contact.id, event: event.id, registration: registration.id, deal: deal.id, invoice: invoice.id, payment: payment.id, sponsorship: sponsorship.id, placement: placement.id, booking: booking.id } as Record<string, number>,
      number: issued.attributes.number as string
    }
  }).pipe(Effect.orDie)

/** A subscription of the chamber to every kind of event. */
const subscribe = (key: string) =>
  Effect.map(call("POST", "/api/v1/hooks", { key, body: { url: `https://hooks.example.com/holds/${Math.random()}`, events: [...EventKinds] } }), (r) => {
    assert.strictEqual(r.status, 201, r.text)
    return r.body.id as number
  })

/** The query strings each search route is asked with (each needs a filter); a search route not named here fails the suite. */
const SEARCHES: Record<string, (tag: string) => ReadonlyArray<string>> = {
  "/api/v1/members/search": (tag) => [`name=${tag}`, "name=member", `email=${tag.toLowerCase()}%40member.example`],
  "/api/v1/contacts/search": (tag) => [`email=${tag.toLowerCase()}%40contact.example`]
}

/** Every GET of the contract as the chamber's key may ask it: lists first page, filtered, since a date; the feed from its start and at its head. */
const readPaths = (ids: Readonly<Record<string, number>>, tags: ReadonlyArray<string>) =>
  endpoints.filter((e) => e.method === "GET").flatMap((e) => {
    const path = e.path.replace(/:([A-Za-z_]+)/g, (_, id: string) => {
      if (ids[id] === undefined) throw new Error(`${e.label}: no row for :${id}`)
      return String(ids[id])
    })
    const queries: Array<string> = [""]
    if (e.path.endsWith("/search")) {
      const search = SEARCHES[e.path]
      if (search === undefined) throw new Error(`${e.label}: a search route this suite does not know how to ask`)
      return tags.flatMap(search).map((q) => `${path}?${q}`)
    }
    if (e.paged) queries.push("updated_since=2000-01-01T00:00:00.000Z", "sort=-created_at")
    if (e.path === "/api/v1/members") queries.push("status=active")
    if (e.path === "/api/v1/changes") queries.push("after=head")
    return queries.map((q) => (q === "" ? path : `${path}?${q}`))
  })

const readAll = (key: string, paths: ReadonlyArray<string>) =>
  Effect.forEach(paths, (path) => Effect.map(call("GET", path, { key }), (r) => [path, { status: r.status, body: r.body }] as const)).pipe(Effect.map((rs) => new Map(rs)))

/** The feed from `cursor` on, following next_cursor until nothing more waits. */
const feedFrom = (key: string, cursor: string) =>
  Effect.gen(function*() {
    const events: Array<any> = []
    for (let after = cursor;;) {
      const r = yield* call("GET", `/api/v1/changes?after=${after}`, { key })
      assert.strictEqual(r.status, 200, r.text)
      events.push(...r.body.data)
      after = r.body.meta.next_cursor
      if (!r.body.meta.has_more) return { events, cursor: after }
    }
  })
const head = (key: string) => Effect.map(call("GET", "/api/v1/changes?after=head", { key }), (r) => r.body.meta.next_cursor as string)

/** Every record `chamber export` writes of the chamber. */
const exported = (tenantId: number) =>
  Effect.gen(function*() {
    const records: Array<ExportRecord> = []
    yield* (yield* Exporter).run(tenantId, { begin: () => Effect.void, records: (_, rs) => Effect.sync(() => records.push(...rs)) })
    return records
  }).pipe(Effect.orDie)

/** The tables whose rows a hold marks, from the catalogue. */
const heldTables = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ readonly t: string }>`SELECT table_name AS t FROM information_schema.columns
    WHERE column_name = 'held_by' AND table_schema = current_schema() AND table_name IN (SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE')`
  return rows.map((r) => r.t).sort()
}).pipe(Effect.orDie)

/** Rows marked with `hold`, table by table (tables with none left out). */
const markedBy = (hold: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const out: Record<string, number> = {}
    for (const t of yield* heldTables) {
      const [row] = yield* sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM ${sql(t)} WHERE held_by = ${hold}`
      if (row!.n > 0) out[t] = row!.n
    }
    return out
  }).pipe(Effect.orDie)

/** The chamber's open holds. */
const holdsLeft = (tenantId: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ readonly id: number }>`SELECT id::int AS id FROM import_holds WHERE tenant_id = ${tenantId} ORDER BY id`).pipe(
  Effect.map((rows) => rows.map((r) => r.id)),
  Effect.orDie
)

/** Discards every hold still open: a test that failed half-way leaves none to the next. */
const letGo = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const holds = yield* ImportHolds
  for (const { id } of yield* sql<{ readonly id: number }>`SELECT id::int AS id FROM import_holds`) yield* holds.discard(id)
}).pipe(Effect.orDie)

/** The tables whose rows the held writes mark; their webhook deliveries are held with their events (no mark of their own). */
const WRITTEN = ["booking_types", "bookings", "contacts", "deals", "events", "invoice_lines", "invoices", "member_counts", "member_names", "members", "outbox_events", "payments", "registrations", "sponsorships"]

describe("import holds on pglite (the embedded database writes an import in slices)", () => {
  layer(serverOn(pgliteRuntime), { timeout: 120_000, excludeTestServices: true })((it) => {
    it.effect("held rows of every resource: absent from every GET of the contract and from the export, 404 on every route naming one, refused as a reference; shown once published", () =>
      Effect.gen(function*() {
        const holds = yield* ImportHolds
        assert.isTrue(holds.sliced)
        const a = yield* chamberWithKey("all")
        const hook = yield* subscribe(a.key)
        const start = yield* head(a.key)
        const kept = yield* seed(a.tenant.id, "Keptrow")
        const paths = readPaths({ ...kept.ids, hook }, ["Keptrow", "Heldrow"])
        const before = yield* readAll(a.key, paths)
        const exportBefore = yield* exported(a.tenant.id)
        const cursor = yield* head(a.key)

        const hold = yield* holds.open(a.tenant.id)
        const held = yield* holds.slice(hold, seed(a.tenant.id, "Heldrow"))
        assert.deepStrictEqual(Object.keys(yield* markedBy(hold)).sort(), WRITTEN, "what the held writes marked")

        const after = yield* readAll(a.key, paths)
        for (const path of paths) {
          assert.deepStrictEqual(after.get(path), before.get(path), `GET ${path} while the hold is open`)
          assert.notInclude(JSON.stringify(after.get(path)).toLowerCase(), "heldrow", `GET ${path}`)
        }
        assert.deepStrictEqual(yield* exported(a.tenant.id), exportBefore, "chamber export while the hold is open")

        // Every route naming a held row, whatever its method, answers as for a row that is not there.
        const sql = yield* SqlClient.SqlClient
        const [delivery] = yield* sql<{ readonly id: number }>`SELECT d.id::int AS id FROM webhook_deliveries d JOIN outbox_events e ON e.id = d.event_id WHERE e.held_by = ${hold} LIMIT 1`
        const heldIds: Record<string, number> = { ...held.ids, delivery: delivery!.id }
        for (const e of endpoints.filter((e) => e.ids.some((id) => id !== "hook"))) {
          const path = e.path.replace(/:([A-Za-z_]+)/g, (_, id: string) => {
            if (id === "hook") return String(hook)
            if (heldIds[id] === undefined) throw new Error(`${e.label}: no held row for :${id}`)
            return String(heldIds[id])
          })
          const reply = yield* call(e.method, path, { key: a.key, body: e.body })
          assert.strictEqual(reply.status, 404, `${e.method} ${path} (a held row): ${reply.text}`)
        }
        // A create naming a held row in its body answers as one naming a row that does not exist.
        for (const e of endpoints.filter((e) => e.method === "POST" && e.ids.length === 0 && e.body !== undefined)) {
          for (const field of Object.keys(e.body as object).filter((f) => referenceCollection(f) !== undefined)) {
            const name = field.slice(0, -3)
            if (held.ids[name] === undefined) continue
            const answer = (id: number) => Effect.map(call("POST", e.path, { key: a.key, body: { ...(e.body as object), [field]: id } }), (r) => [r.status, r.body])
            assert.deepStrictEqual(
              yield* answer(held.ids[name]!),
              (yield* answer(999_999_999)).map((x) => JSON.parse(JSON.stringify(x).replaceAll("999999999", String(held.ids[name])))),
              `POST ${e.path} with ${field} of a held row`
            )
          }
        }
        assert.deepStrictEqual(yield* readAll(a.key, paths.filter((p) => p.includes("/changes"))), new Map([...before].filter(([p]) => p.includes("/changes"))))

        // Published: all of it at once.
        yield* holds.publish(hold)
        const member = yield* call("GET", `/api/v1/members/${held.ids.member}`, { key: a.key })
        assert.strictEqual(member.status, 200, member.text)
        assert.strictEqual((yield* call("GET", "/api/v1/members", { key: a.key })).body.meta.total, 2)
        const events = (yield* feedFrom(a.key, cursor)).events
        // The held writes' events, as many and of the same kinds as the same writes made outside a hold.
        assert.deepStrictEqual(events.map((e) => e.type), (yield* feedFrom(a.key, start)).events.slice(0, events.length).map((e) => e.type))
        assert.include(JSON.stringify(events[0]), "Heldrow Member")
        assert.strictEqual((yield* exported(a.tenant.id)).length, 2 * exportBefore.length, "the export once published")
      }).pipe(Effect.ensuring(letGo)))

    it.effect("the feed stops at the fence while the hold is open and gives every event once, in order, when it is published; another chamber's feed goes on", () =>
      Effect.gen(function*() {
        const holds = yield* ImportHolds
        const a = yield* chamberWithKey("all")
        const b = yield* chamberWithKey("all")
        const post = (key: string, name: string) => Effect.map(call("POST", "/api/v1/members", { key, body: { name, status: "active" } }), (r) => assert.strictEqual(r.status, 201, r.text))
        yield* post(a.key, "Before")
        const cursorA = yield* head(a.key)
        const cursorB = yield* head(b.key)

        const hold = yield* holds.open(a.tenant.id)
        for (const name of ["Held 1", "Held 2", "Held 3"]) yield* holds.slice(hold, (yield* Members).create(a.tenant.id, { name, status: "active" }).pipe(Effect.orDie))
        yield* post(a.key, "Through the API")
        const list = yield* call("GET", "/api/v1/members", { key: a.key })
        assert.deepStrictEqual(list.body.data.map((m: any) => m.attributes.name), ["Before", "Through the API"])
        const waiting = yield* feedFrom(a.key, cursorA)
        assert.deepStrictEqual([waiting.events, waiting.cursor], [[], cursorA], "the feed while the hold is open")
        yield* post(b.key, "Elsewhere")
        assert.deepStrictEqual((yield* feedFrom(b.key, cursorB)).events.map((e) => e.data.attributes.name), ["Elsewhere"])

        yield* holds.publish(hold)
        const { events } = yield* feedFrom(a.key, cursorA)
        assert.deepStrictEqual(events.map((e) => e.data.attributes.name), ["Held 1", "Held 2", "Held 3", "Through the API"])
        assert.strictEqual(new Set(events.map((e) => e.id)).size, 4)
      }).pipe(Effect.ensuring(letGo)))

    it.effect("the relay claims no delivery of a held event until the hold is published", () =>
      Effect.gen(function*() {
        const holds = yield* ImportHolds
        const a = yield* chamberWithKey("all")
        yield* subscribe(a.key)
        const store = yield* Effect.provide(Effect.gen(function*() { return yield* DeliveryStore }), DeliveryStoreSql)
        const claim = Effect.map(store.claim({ relayId: "import-holds-test", limit: 1000, leaseMs: 60_000, perSubscription: 1000 }), (c) =>
          c.deliveries.filter((d) => d.tenantId === a.tenant.id).map((d) => (d.event.data as any).attributes.name as string).sort())
        yield* call("POST", "/api/v1/members", { key: a.key, body: { name: "Before", status: "active" } })
        assert.deepStrictEqual(yield* claim, ["Before"])

        const hold = yield* holds.open(a.tenant.id)
        for (const name of ["Held 1", "Held 2"]) yield* holds.slice(hold, (yield* Members).create(a.tenant.id, { name, status: "active" }).pipe(Effect.orDie))
        assert.deepStrictEqual(yield* claim, [], "claimed while the hold is open")
        yield* holds.publish(hold)
        assert.deepStrictEqual(yield* claim, ["Held 1", "Held 2"])
        yield* store.release("import-holds-test")
      }).pipe(Effect.ensuring(letGo)))

    it.effect("a discarded hold leaves no row in any table, lifts the fence, and gives back its invoice number", () =>
      Effect.gen(function*() {
        const holds = yield* ImportHolds
        const a = yield* chamberWithKey("all")
        yield* subscribe(a.key)
        const kept = yield* seed(a.tenant.id, "Keptrow")
        const cursor = yield* head(a.key)
        const hold = yield* holds.open(a.tenant.id)
        const held = yield* holds.slice(hold, seed(a.tenant.id, "Heldrow"))
        assert.notStrictEqual(held.number, kept.number)
        const api = yield* call("POST", "/api/v1/members", { key: a.key, body: { name: "Through the API", status: "active" } })
        assert.strictEqual(api.status, 201, api.text)
        assert.deepStrictEqual(Object.keys(yield* markedBy(hold)).sort(), WRITTEN)

        yield* holds.discard(hold)
        assert.deepStrictEqual(yield* markedBy(hold), {}, "rows marked with the discarded hold")
        assert.deepStrictEqual(yield* holdsLeft(a.tenant.id), [])
        const members = yield* call("GET", "/api/v1/members", { key: a.key })
        assert.deepStrictEqual([members.body.meta.total, members.body.data.map((m: any) => m.attributes.name)], [2, ["Keptrow Member", "Through the API"]])
        assert.deepStrictEqual((yield* feedFrom(a.key, cursor)).events.map((e) => e.data.attributes.name), ["Through the API"])

        // The next invoice the API issues takes the number the discarded import's had taken.
        const invoice = yield* call("POST", "/api/v1/invoices", {
          key: a.key,
          body: { member_id: kept.ids.member, lines: [{ description: "Dues", unit: "10.00", quantity: 1 }] }
        })
        assert.strictEqual(invoice.status, 201, invoice.text)
        const issued = yield* call("POST", `/api/v1/invoices/${invoice.body.data.id}/issue`, { key: a.key })
        assert.strictEqual(issued.status, 200, issued.text)
        assert.strictEqual(issued.body.data.attributes.number, held.number)
      }).pipe(Effect.ensuring(letGo)))

    it.effect("an import that pays an invoice already in the chamber (by invoice_id), and is refused: the invoice reads as it did before the import", () =>
      Effect.gen(function*() {
        const a = yield* chamberWithKey("all")
        const kept = yield* seed(a.tenant.id, "Keptrow")
        const invoices = () => Effect.map(call("GET", "/api/v1/invoices", { key: a.key }), (r) => r.body)
        const before = yield* invoices()
        // The first payment is written (balance 60.00 of 100.00 left); the second is more than the balance: the whole import is refused.
        const failed = yield* (yield* Importer).run(a.tenant.id, {
          payments: [
            { invoice_id: kept.ids.invoice, method: "check", amount: "60.00", reference: "Heldrow 1" },
            { invoice_id: kept.ids.invoice, method: "check", amount: "900.00", reference: "Heldrow 2" }
          ]
        }).pipe(Effect.flip)
        assert.strictEqual(failed._tag, "ImportInvalid", failed.message)
        assert.deepStrictEqual(yield* invoices(), before, "GET /api/v1/invoices after the import was refused")
      }).pipe(Effect.ensuring(letGo)))

    it.effect("a held custom field definition: members already holding a value of its key read as before, while it is held and once it is discarded", () =>
      Effect.gen(function*() {
        const holds = yield* ImportHolds
        const a = yield* chamberWithKey("all")
        yield* (yield* Members).create(a.tenant.id, { name: "Acme", status: "active", custom_fields: { founded: "1952" } }).pipe(Effect.orDie)
        const members = () => Effect.map(call("GET", "/api/v1/members", { key: a.key }), (r) => r.body)
        const before = yield* members()
        const hold = yield* holds.open(a.tenant.id)
        yield* holds.slice(hold, (yield* Tenants).addField(a.tenant.id, { resource: "member", key: "founded", label: "Founded", api_visible: true }).pipe(Effect.orDie))
        const during = yield* members()
        yield* holds.discard(hold)
        assert.deepStrictEqual([during, yield* members()], [before, before], "GET /api/v1/members while the definition is held, and after it is discarded")
      }).pipe(Effect.ensuring(letGo)))

    it.effect("sweep discards the holds of a process that is gone and of one idle past the limit, and keeps a live one", () =>
      Effect.gen(function*() {
        const holds = yield* ImportHolds
        const sql = yield* SqlClient.SqlClient
        const a = yield* chamberWithKey("all")
        const dead = yield* Effect.promise(() =>
          new Promise<number>((resolve) => {
            const child = spawn(process.execPath, ["-e", "0"])
            child.on("exit", () => resolve(child.pid!))
          })
        )
        const [gone, live, idle] = [yield* holds.open(a.tenant.id), yield* holds.open(a.tenant.id), yield* holds.open(a.tenant.id)]
        for (const [hold, name] of [[gone, "Gone"], [live, "Live"], [idle, "Idle"]] as const) {
          yield* holds.slice(hold, (yield* Members).create(a.tenant.id, { name, status: "active" }).pipe(Effect.orDie))
        }
        yield* sql`UPDATE import_holds SET pid = ${dead} WHERE id = ${gone}`
        yield* sql`UPDATE import_holds SET touched_at = now() - interval '3 minutes' WHERE id = ${idle}`
        assert.strictEqual(yield* holds.sweep("2 minutes"), 2)
        assert.deepStrictEqual(yield* holdsLeft(a.tenant.id), [live])
        assert.deepStrictEqual([yield* markedBy(gone), yield* markedBy(idle)], [{}, {}])
        yield* holds.publish(live)
        const members = yield* call("GET", "/api/v1/members", { key: a.key })
        assert.deepStrictEqual(members.body.data.map((m: any) => m.attributes.name), ["Live"])
        assert.strictEqual(members.body.meta.total, 1)
      }).pipe(Effect.orDie, Effect.ensuring(letGo)))

    it.effect("an import interrupted after some slices leaves nothing of itself and no hold", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const a = yield* chamberWithKey("all")
        yield* subscribe(a.key)
        const members = Array.from({ length: 3000 }, (_, i) => ({ ref: `m${i}`, name: `Imported ${i}`, status: "active" }))
        // The import's hold is the next one opened; the import tells when two slices of 250 are written under it.
        const [taken] = yield* sql<{ readonly n: number }>`SELECT nextval('import_holds_id_seq')::int AS n`
        const hold = taken!.n + 1
        let twoWritten = () => {}
        const twoSlices = new Promise<void>((resolve) => (twoWritten = resolve))
        const fiber = yield* Effect.forkChild((yield* Importer).run(a.tenant.id, { members }, {
          progress: (p) => {
            if (p.phase === "writing" && p.done === 500) twoWritten()
          }
        }))
        yield* Effect.promise(() => twoSlices)
        yield* Fiber.interrupt(fiber)
        const exit = yield* Fiber.await(fiber)
        assert.isTrue(Exit.hasInterrupts(exit), `the import was still under way: ${JSON.stringify(Exit.isSuccess(exit) && exit.value.counts)}`)
        assert.deepStrictEqual(yield* holdsLeft(a.tenant.id), [])
        assert.deepStrictEqual(yield* markedBy(hold), {}, "rows of the interrupted import")
        const list = yield* call("GET", "/api/v1/members", { key: a.key })
        assert.deepStrictEqual([list.body.meta.total, list.body.data], [0, []])
        assert.deepStrictEqual((yield* call("GET", "/api/v1/changes", { key: a.key })).body.data, [])
      }).pipe(Effect.orDie, Effect.ensuring(letGo)))
  })
})

for (const rt of runtimes().filter((rt) => rt.name === "postgres")) {
  describe("import holds on postgres: never sliced, an import is one transaction", () => {
    layer(serverOn(rt), { timeout: 120_000, excludeTestServices: true })((it) => {
      it.effect("ImportHolds.sliced is false and an import is shown whole", () =>
        Effect.gen(function*() {
          assert.isFalse((yield* ImportHolds).sliced)
          const a = yield* chamberWithKey("all")
          yield* (yield* Importer).run(a.tenant.id, { members: [{ ref: "a", name: "One", status: "active" }, { ref: "b", name: "Two", status: "active" }] })
          const sql = yield* SqlClient.SqlClient
          assert.deepStrictEqual(yield* sql`SELECT count(*)::int AS n FROM members WHERE held_by IS NOT NULL`, [{ n: 0 }])
          assert.strictEqual((yield* call("GET", "/api/v1/members", { key: a.key })).body.meta.total, 2)
        }).pipe(Effect.orDie))
    })
  })
}
