/**
 * Contacts and newsletter subscribers over HTTP (docs/api.md "Contacts and subscribers"), on every
 * storage runtime: create, list, search and update; subscribers idempotent on the address, 201
 * against 200, names never overwritten, one contact however many subscribe at once; and
 * contact.created written with the contact. Access, ids and body errors are checked for every
 * endpoint by contract.test.ts.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { Contacts, ContactResource, Outbox, Tenants } from "@chamber/core"
import { runtimes } from "@chamber/pg-adapter/testing"
import { assertError } from "./assertions.ts"
import { call, chamberWithKey, serverOn } from "./fixture.ts"

const writer = chamberWithKey("contacts:read,contacts:write")

const post = (key: string, body: unknown) => call("POST", "/api/v1/contacts", { key, body })
const subscribe = (key: string, body: unknown) => call("POST", "/api/v1/subscribers", { key, body })
const created = (reply: { status: number; body: any }) => {
  assert.strictEqual(reply.status, 201, JSON.stringify(reply.body))
  return reply.body.data
}

for (const rt of runtimes()) {
  describe(`contacts and subscribers over HTTP on ${rt.name}`, () => {
    layer(serverOn(rt), { timeout: 120_000 })((it) => {
      it.effect("POST /contacts: 201 {data} with every field; names required and not blank; contact.created written with it", () =>
        Effect.gen(function*() {
          const { tenant, key } = yield* writer
          const { custom_fields: _, ...body } = ContactResource.example
          const contact = created(yield* post(key, body))
          assert.deepStrictEqual(Object.keys(contact), ["id", "attributes", "created_at", "updated_at"])
          assert.deepStrictEqual(contact.attributes, { ...body, custom_fields: {} })
          const events = yield* (yield* Outbox).list(tenant.id, { type: "contact.created" })
          assert.deepStrictEqual(events.map((e) => e.data), [contact])
          const bad = yield* post(key, { first_name: " ", email: "nope" })
          assert.deepStrictEqual(bad.body.errors, {
            first_name: ["The first name field is required."],
            last_name: ["The last name field is required."],
            email: ["The email field must be a valid email address."]
          })
          assert.strictEqual((yield* (yield* Outbox).list(tenant.id, { type: "contact.created" })).length, 1)
        }))

      it.effect("GET /contacts: by last name (case-insensitive) then id by default; sort by created_at either way; 100 a page", () =>
        Effect.gen(function*() {
          const { key } = yield* writer
          const ids: Array<number> = []
          for (const [first, last] of [["Zed", "adams"], ["Amy", "Brown"], ["Bob", "Adams"], ["Cy", "cole"]]) {
            ids.push(created(yield* post(key, { first_name: first, last_name: last })).id)
          }
          const order = (query: string) =>
            call("GET", `/api/v1/contacts${query}`, { key }).pipe(Effect.map((r) => r.body.data.map((c: any) => c.id)))
          assert.deepStrictEqual(yield* order(""), [ids[0], ids[2], ids[1], ids[3]])
          assert.deepStrictEqual(yield* order("?sort=-last_name"), [ids[3], ids[1], ids[2], ids[0]])
          assert.deepStrictEqual(yield* order("?sort=created_at"), ids)
          assert.deepStrictEqual(yield* order("?sort=-created_at"), [...ids].reverse())
          assert.deepStrictEqual(yield* order("?sort=first_name"), yield* order(""))
          const meta = (yield* call("GET", "/api/v1/contacts?page=2", { key })).body
          assert.deepStrictEqual(meta, { data: [], meta: { current_page: 2, per_page: 100, total: 4, last_page: 1 } })
        }))

      it.effect("GET /contacts/search: email required, exact and case-insensitive", () =>
        Effect.gen(function*() {
          const { key } = yield* writer
          const ann = created(yield* post(key, { first_name: "Ann", last_name: "Lee", email: "Ann.Lee@Acme.example" }))
          created(yield* post(key, { first_name: "Annie", last_name: "Leeds", email: "ann.lee@acme.example.org" }))
          const found = yield* call("GET", "/api/v1/contacts/search?email=ann.lee%40ACME.example", { key })
          assert.deepStrictEqual(found.body.data, [ann])
          assert.deepStrictEqual(found.body.meta.total, 1)
          assertError(yield* call("GET", "/api/v1/contacts/search", { key }), 422, {
            message: "The email field is required.",
            errors: { email: ["The email field is required."] }
          })
          assert.deepStrictEqual((yield* call("GET", "/api/v1/contacts/search?email=nobody%40x.example", { key })).body.data, [])
        }))

      it.effect("PATCH /contacts/{contact}: only the fields sent change; null clears a nullable one; names stay required", () =>
        Effect.gen(function*() {
          const { key } = yield* writer
          const before = created(yield* post(key, { first_name: "Ann", last_name: "Lee", title: "Owner", phone: "555-0100" }))
          const after = yield* call("PATCH", `/api/v1/contacts/${before.id}`, { key, body: { title: "Director", phone: null } })
          assert.strictEqual(after.status, 200)
          assert.deepStrictEqual(after.body.data.attributes, { ...before.attributes, title: "Director", phone: null })
          const refused = yield* call("PATCH", `/api/v1/contacts/${before.id}`, { key, body: { first_name: null } })
          assert.deepStrictEqual(refused.body.errors, { first_name: ["The first name field must be a string."] })
        }))

      it.effect("POST /subscribers: new 201, already subscribed 200 with no duplicate, names applied only at creation, case-insensitive", () =>
        Effect.gen(function*() {
          const { tenant, key } = yield* writer
          const first = yield* subscribe(key, { email: "New@Reader.example", first_name: "Nia", last_name: "Reed" })
          const contact = created(first)
          assert.deepInclude(contact.attributes, { first_name: "Nia", last_name: "Reed", email: "New@Reader.example" })
          const again = yield* subscribe(key, { email: "new@reader.EXAMPLE", first_name: "Other", last_name: "Name" })
          assert.deepStrictEqual([again.status, again.body.data], [200, contact])
          const bare = created(yield* subscribe(key, { email: "bare@reader.example" }))
          assert.deepInclude(bare.attributes, { first_name: "", last_name: "", email: "bare@reader.example" })
          const listed = yield* call("GET", "/api/v1/contacts", { key })
          assert.strictEqual(listed.body.meta.total, 2)
          const events = yield* (yield* Outbox).list(tenant.id, { type: "contact.created" })
          assert.deepStrictEqual(events.map((e) => (e.data as any).id), [contact.id, bare.id])
          assertError(yield* subscribe(key, { first_name: "No", last_name: "Email" }), 422, {
            message: "The email field is required.",
            errors: { email: ["The email field is required."] }
          })
        }))

      it.effect("POST /subscribers: a contact not subscribed (made by POST /contacts, or unsubscribed) is subscribed again with 201, names kept", () =>
        Effect.gen(function*() {
          const { tenant, key } = yield* writer
          const contact = created(yield* post(key, { first_name: "Kept", last_name: "Names", email: "kept@names.example" }))
          const resubscribed = yield* subscribe(key, { email: "KEPT@names.example", first_name: "New", last_name: "Names" })
          assert.deepStrictEqual([resubscribed.status, resubscribed.body.data.id, resubscribed.body.data.attributes.first_name], [201, contact.id, "Kept"])
          assert.strictEqual((yield* subscribe(key, { email: "kept@names.example" })).status, 200)
          yield* (yield* Contacts).unsubscribe(tenant.id, contact.id)
          const back = yield* subscribe(key, { email: "kept@names.example", first_name: "X" })
          assert.deepStrictEqual([back.status, back.body.data.id, back.body.data.attributes.first_name], [201, contact.id, "Kept"])
          assert.strictEqual((yield* call("GET", "/api/v1/contacts", { key })).body.meta.total, 1)
          // Only the new contact fired contact.created: resubscribing made none.
          assert.strictEqual((yield* (yield* Outbox).list(tenant.id, { type: "contact.created" })).length, 1)
        }))

      it.effect("20 concurrent subscribes of one new address make one contact: one 201, the rest 200 with the same id", () =>
        Effect.gen(function*() {
          const { key } = yield* writer
          const replies = yield* Effect.forEach(
            Array.from({ length: 20 }, (_, i) => ({ email: i % 2 === 0 ? "rush@hour.example" : "RUSH@hour.example", first_name: `N${i}` })),
            (body) => subscribe(key, body),
            { concurrency: "unbounded" }
          )
          assert.deepStrictEqual(replies.map((r) => r.status).sort((a, b) => a - b), [...Array.from({ length: 19 }, () => 200), 201])
          assert.strictEqual(new Set(replies.map((r) => r.body.data.id)).size, 1)
          assert.strictEqual((yield* call("GET", "/api/v1/contacts", { key })).body.meta.total, 1)
        }))

      it.effect("the core's subscribe, 20 at once for each of 5 new addresses (as many as the pool has connections), makes one contact per address", () =>
        Effect.gen(function*() {
          const { tenant } = yield* writer
          const contacts = yield* Contacts
          for (let round = 0; round < 5; round++) {
            const results = yield* Effect.forEach(
              Array.from({ length: 20 }, () => ({ email: `race${round}@pool.example` })),
              (input) => contacts.subscribe(tenant.id, input),
              { concurrency: "unbounded" }
            )
            assert.strictEqual(new Set(results.map((r) => r.contact.id)).size, 1, `round ${round}`)
            assert.deepStrictEqual(results.filter((r) => r.outcome === "created").length, 1, `round ${round}`)
          }
        }))

      it.effect("custom_fields shows the chamber's API-visible contact fields only", () =>
        Effect.gen(function*() {
          const { tenant, key } = yield* writer
          const tenants = yield* Tenants
          yield* tenants.addField(tenant.id, { resource: "contact", key: "topics", label: "Topics", api_visible: true }).pipe(Effect.orDie)
          yield* tenants.addField(tenant.id, { resource: "contact", key: "notes", label: "Notes", api_visible: false }).pipe(Effect.orDie)
          const contact = yield* (yield* Contacts).create(tenant.id, { first_name: "Cf", last_name: "Test", custom_fields: { topics: "events", notes: "private" } })
          assert.deepStrictEqual(contact.attributes.custom_fields, { topics: "events" })
          const listed = yield* call("GET", "/api/v1/contacts", { key })
          assert.deepStrictEqual(listed.body.data[0].attributes.custom_fields, { topics: "events" })
        }))
    })
  })
}
