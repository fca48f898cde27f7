/**
 * POST and PATCH /api/v1/members over HTTP (docs/api.md "Members" and "Errors"), on every
 * storage runtime: every bound on both sides, what is stored and shown, what is ignored, and
 * slugs.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { MemberResource, Tenants } from "@chamber/core"
import { runtimes } from "@chamber/pg-adapter/testing"
import { assertInvalid, assertSingle, ATTRIBUTE_KEYS } from "./assertions.ts"
import { call, chamberWithKey, serverOn } from "./fixture.ts"

const x = (n: number, c = "x") => c.repeat(n)

/**
 * One case of each kind of rule over the wire, with its whole 422 body; every bound of every
 * field is checked on the schemas (packages/core/test/member-fields.test.ts).
 */
const RULES: ReadonlyArray<readonly [rule: string, body: Record<string, unknown>, errors: Record<string, Array<string>>]> = [
  ["wrong type", { directory_visible: "yes" }, { directory_visible: ["The directory visible field must be true or false."] }],
  ["max length, in characters", { phone: "😀".repeat(51) }, { phone: ["The phone field must not be greater than 50 characters."] }],
  ["one of", { status: "deleted" }, { status: ["The selected status is invalid (expected one of: active, pending, lapsed, former)."] }],
  ["integer range", { employee_count: 1_000_001 }, { employee_count: ["The employee count field must not be greater than 1000000."] }],
  ["integer", { employee_count: 1.5 }, { employee_count: ["The employee count field must be an integer."] }],
  ["email", { email: "a@b" }, { email: ["The email field must be a valid email address."] }],
  ["calendar date", { member_since: "2023-02-29" }, { member_since: ["The member since field must be a valid date (YYYY-MM-DD)."] }],
  ["pattern", { slug: "Acme" }, { slug: ["The slug field must be lower-case letters and digits in groups joined by single hyphens."] }],
  ["list items", { secondary_industries: Array.from({ length: 51 }, () => "Retail") }, {
    secondary_industries: ["The secondary industries field must not have more than 50 items."]
  }],
  ["an item of a list", { secondary_industries: ["ok", x(256)] }, {
    "secondary_industries.1": ["The secondary industries field must not be greater than 255 characters."]
  }],
  ["NUL character", { city: "a\u0000b" }, { city: ["The city field must not contain NUL characters."] }],
  ["blank required text", { name: "   " }, { name: ["The name field is required."] }]
]

/** Every writable member field, each with its declared example. */
const { custom_fields: _hidden, ...FULL } = MemberResource.example

for (const rt of runtimes()) {
  describe(`members create and update over HTTP on ${rt.name}`, () => {
    layer(serverOn(rt), { timeout: 120_000 })((it) => {
      const writer = chamberWithKey("members:read,members:write")

      it.effect("POST stores every field and returns it in attributes: 201 {data: {id, attributes, created_at, updated_at}}", () =>
        Effect.gen(function*() {
          const { key } = yield* writer
          const created = yield* call("POST", "/api/v1/members", { key, body: FULL })
          const member = assertSingle(created, 201)
          assert.deepStrictEqual(member.attributes, { ...FULL, custom_fields: {} })
          assert.deepStrictEqual(Object.keys(member.attributes), ATTRIBUTE_KEYS)
          assert.strictEqual(member.created_at, member.updated_at)
          assert.isBelow(Math.abs(Date.parse(member.created_at) - Date.now()), 10 * 60_000)
          const got = yield* call("GET", `/api/v1/members/${member.id}`, { key })
          assert.deepStrictEqual(assertSingle(got, 200), member)
          const listed = yield* call("GET", "/api/v1/members", { key })
          assert.deepStrictEqual(listed.body.data, [member])
        }))

      it.effect("POST with only name and status: every optional attribute is null, directory_visible a boolean", () =>
        Effect.gen(function*() {
          const { key } = yield* writer
          const member = assertSingle(yield* call("POST", "/api/v1/members", { key, body: { name: "Bare Co", status: "active" } }), 201)
          const { name, status, slug, directory_visible, custom_fields, ...rest } = member.attributes
          assert.deepStrictEqual([name, status, slug, custom_fields], ["Bare Co", "active", "bare-co", {}])
          assert.isBoolean(directory_visible)
          for (const [field, value] of Object.entries(rest)) assert.isNull(value, field)
          // Explicit nulls are the same as omitted fields.
          const nulls = Object.fromEntries(Object.keys(rest).map((k) => [k, null]))
          const withNulls = assertSingle(
            yield* call("POST", "/api/v1/members", { key, body: { name: "Null Co", status: "former", ...nulls, slug: null, directory_visible: null } }),
            201
          )
          for (const field of Object.keys(rest)) assert.isNull(withNulls.attributes[field], field)
          assert.strictEqual(withNulls.attributes.slug, "null-co")
          assert.isBoolean(withNulls.attributes.directory_visible)
        }))

      it.effect("POST accepts a bound exactly and stores it intact: 50 emoji in a phone of at most 50 characters", () =>
        Effect.gen(function*() {
          const { key } = yield* writer
          const phone = "😀".repeat(50)
          const member = assertSingle(yield* call("POST", "/api/v1/members", { key, body: { name: "Emoji Co", status: "active", phone } }), 201)
          assert.strictEqual(member.attributes.phone, phone)
          assert.deepStrictEqual(assertSingle(yield* call("GET", `/api/v1/members/${member.id}`, { key }), 200).attributes.phone, phone)
        }))

      it.effect("POST: each kind of rule answers 422 with its message on its field, and nothing is stored", () =>
        Effect.gen(function*() {
          const { key } = yield* writer
          for (const [rule, body, errors] of RULES) {
            const reply = yield* call("POST", "/api/v1/members", { key, body: { name: "Invalid Co", status: "active", ...body } })
            assert.deepStrictEqual([reply.status, reply.body], [422, { message: Object.values(errors)[0]![0], errors }], rule)
          }
          assert.deepStrictEqual((yield* call("GET", "/api/v1/members", { key })).body.meta.total, 0)
          assert.deepStrictEqual((yield* call("POST", "/api/v1/members", { key, body: { status: "active" } })).body, {
            message: "The name field is required.",
            errors: { name: ["The name field is required."] }
          })
        }))

      it.effect("several errors: message is the first error plus ' (and 1 more error)' or ' (and N more errors)', errors lists every field", () =>
        Effect.gen(function*() {
          const { key } = yield* writer
          const empty = yield* call("POST", "/api/v1/members", { key, body: {} })
          assertInvalid(empty, ["name", "status"])
          assert.deepStrictEqual(empty.body, {
            message: "The name field is required. (and 1 more error)",
            errors: { name: ["The name field is required."], status: ["The status field is required."] }
          })
          const four = yield* call("POST", "/api/v1/members", {
            key,
            body: { status: "bogus", phone: x(51), zip: x(21), employee_count: -5 }
          })
          const errors = assertInvalid(four, ["name", "status", "phone", "zip", "employee_count"])
          assert.deepStrictEqual(errors.name, ["The name field is required."])
          assert.strictEqual(four.body.message, "The name field is required. (and 4 more errors)")
          // One error: no suffix.
          const one = yield* call("POST", "/api/v1/members", { key, body: { name: "Co", status: "active", zip: x(21) } })
          const zip = "The zip field must not be greater than 20 characters."
          assert.deepStrictEqual(one.body, { message: zip, errors: { zip: [zip] } })
        }))

      it.effect("unknown fields (id, tenant_id, created_at, custom_fields, foo...) are ignored and never stored", () =>
        Effect.gen(function*() {
          const { tenant, key } = yield* writer
          const other = yield* chamberWithKey("members:read,members:write")
          const tenants = yield* Tenants
          // An API-visible custom field would show a stored value: none may be stored through the API.
          yield* tenants.addField(tenant.id, { resource: "member", key: "tier", label: "Tier", api_visible: true }).pipe(Effect.orDie)
          const body = {
            name: "Mass Assign Co",
            status: "active",
            id: 424242,
            tenant_id: other.tenant.id,
            created_at: "2001-01-01T00:00:00.000Z",
            updated_at: "2001-01-01T00:00:00.000Z",
            custom_fields: { tier: "gold" },
            attributes: { name: "Nested" },
            foo: "bar"
          }
          const member = assertSingle(yield* call("POST", "/api/v1/members", { key, body }), 201)
          assert.notStrictEqual(member.id, 424242)
          assert.notInclude(member.created_at, "2001")
          assert.notInclude(member.updated_at, "2001")
          assert.strictEqual(member.attributes.name, "Mass Assign Co")
          assert.deepStrictEqual(member.attributes.custom_fields, {})
          assert.notProperty(member.attributes, "foo")
          assert.notProperty(member, "foo")
          assert.deepStrictEqual(assertSingle(yield* call("GET", `/api/v1/members/${member.id}`, { key }), 200), member)
          // It belongs to the key's chamber, not the one named in the body.
          assert.strictEqual((yield* call("GET", `/api/v1/members/${member.id}`, { key: other.key })).status, 404)
          assert.strictEqual((yield* call("GET", "/api/v1/members", { key: other.key })).body.meta.total, 0)
          assert.strictEqual((yield* call("GET", "/api/v1/members/424242", { key })).status, 404)

          const patched = assertSingle(
            yield* call("PATCH", `/api/v1/members/${member.id}`, { key, body: { ...body, name: "Renamed Co", status: "lapsed" } }),
            200
          )
          assert.deepStrictEqual(patched.id, member.id)
          assert.strictEqual(patched.created_at, member.created_at)
          assert.deepStrictEqual(patched.attributes, { ...member.attributes, name: "Renamed Co", status: "lapsed" })
          assert.strictEqual((yield* call("GET", "/api/v1/members", { key: other.key })).body.meta.total, 0)
        }))

      it.effect("slugs: generated from the name, made unique with -2, -3; an explicit duplicate is a 422 on slug", () =>
        Effect.gen(function*() {
          const { key } = yield* writer
          const post = (body: Record<string, unknown>) => call("POST", "/api/v1/members", { key, body: { status: "active", ...body } })
          const slugOf = (body: Record<string, unknown>) =>
            post(body).pipe(Effect.map((r) => assertSingle(r, 201).attributes.slug as string))
          assert.strictEqual(yield* slugOf({ name: "Acme & Sons, LLC" }), "acme-sons-llc")
          assert.strictEqual(yield* slugOf({ name: "Acme & Sons, LLC" }), "acme-sons-llc-2")
          assert.strictEqual(yield* slugOf({ name: "ACME  sons llc!" }), "acme-sons-llc-3")
          assert.strictEqual(yield* slugOf({ name: "Acme & Sons, LLC", slug: null }), "acme-sons-llc-4")
          assert.strictEqual(yield* slugOf({ name: "  Blue   Door!! " }), "blue-door")
          assert.strictEqual(yield* slugOf({ name: "Acme & Sons, LLC", slug: "acme-and-sons" }), "acme-and-sons")

          const taken = yield* post({ name: "Else", slug: "acme-sons-llc" })
          assert.deepStrictEqual([taken.status, taken.body], [422, {
            message: "The slug has already been taken.",
            errors: { slug: ["The slug has already been taken."] }
          }])
          assertInvalid(yield* post({ name: "Else", slug: "acme-sons-llc-2" }), ["slug"])
          assertInvalid(yield* post({ name: "Else", slug: "blue-door" }), ["slug"])
          const names = (yield* call("GET", "/api/v1/members/search?name=else", { key })).body.meta.total
          assert.strictEqual(names, 0)

          // An explicit slug past the numbered ones is respected by later generation.
          assert.strictEqual(yield* slugOf({ name: "Other", slug: "acme-sons-llc-5" }), "acme-sons-llc-5")
          assert.strictEqual(yield* slugOf({ name: "Acme & Sons, LLC" }), "acme-sons-llc-6")

          for (const slug of ["Acme", "acme--sons", "-acme", "acme-", "acme sons", "acme_sons", "ACME-SONS", ""]) {
            const reply = yield* post({ name: "Pattern Co", slug })
            const errors = assertInvalid(reply, ["slug"], `slug ${JSON.stringify(slug)}`)
            assert.deepStrictEqual(errors.slug, ["The slug field must be lower-case letters and digits in groups joined by single hyphens."])
          }
        }))

      it.effect("concurrent creates with the same name all succeed, each with its own slug", () =>
        Effect.gen(function*() {
          const { key } = yield* writer
          const replies = yield* Effect.forEach(
            Array.from({ length: 16 }, () => ({ name: "Same Moment Co", status: "active" })),
            (body) => call("POST", "/api/v1/members", { key, body }),
            { concurrency: "unbounded" }
          )
          assert.deepStrictEqual(replies.map((r) => r.status), replies.map(() => 201), JSON.stringify(replies.find((r) => r.status !== 201)?.body))
          const slugs = replies.map((r) => r.body.data.attributes.slug as string).sort()
          assert.deepStrictEqual(slugs, ["same-moment-co", ...Array.from({ length: 15 }, (_, i) => `same-moment-co-${i + 2}`)].sort())
        }))

      it.effect("slugs are unique per chamber, not globally: the same slug is fine in another chamber", () =>
        Effect.gen(function*() {
          const a = yield* writer
          const b = yield* writer
          const slugOf = (key: string, body: Record<string, unknown>) =>
            call("POST", "/api/v1/members", { key, body: { status: "active", ...body } }).pipe(
              Effect.map((r) => assertSingle(r, 201).attributes.slug as string)
            )
          assert.strictEqual(yield* slugOf(a.key, { name: "Shared Name" }), "shared-name")
          assert.strictEqual(yield* slugOf(b.key, { name: "Shared Name" }), "shared-name")
          assert.strictEqual(yield* slugOf(a.key, { name: "Explicit", slug: "same-slug" }), "same-slug")
          assert.strictEqual(yield* slugOf(b.key, { name: "Explicit", slug: "same-slug" }), "same-slug")
          assert.strictEqual(yield* slugOf(b.key, { name: "Shared Name" }), "shared-name-2")
        }))

      it.effect("PATCH: 200 {data}; omitted fields stay as they were; id and created_at never move", () =>
        Effect.gen(function*() {
          const { key } = yield* writer
          const before = assertSingle(yield* call("POST", "/api/v1/members", { key, body: FULL }), 201)
          const reply = yield* call("PATCH", `/api/v1/members/${before.id}`, { key, body: { city: "Shelbyville", employee_count: 43 } })
          const after = assertSingle(reply, 200)
          assert.deepStrictEqual(after.attributes, { ...before.attributes, city: "Shelbyville", employee_count: 43 })
          assert.strictEqual(after.id, before.id)
          assert.strictEqual(after.created_at, before.created_at)
          assert.notStrictEqual(after.updated_at, before.updated_at)
          assert.isAtLeast(Date.parse(after.updated_at), Date.parse(before.updated_at))
          assert.deepStrictEqual(assertSingle(yield* call("GET", `/api/v1/members/${before.id}`, { key }), 200), after)

          // name and status are optional on update, and each status can be set.
          for (const status of ["active", "lapsed", "former", "pending"]) {
            const next = assertSingle(yield* call("PATCH", `/api/v1/members/${before.id}`, { key, body: { status } }), 200)
            assert.deepStrictEqual(next.attributes, { ...after.attributes, status })
          }
          const renamed = assertSingle(yield* call("PATCH", `/api/v1/members/${before.id}`, { key, body: { name: "New Name" } }), 200)
          assert.strictEqual(renamed.attributes.name, "New Name")
          assert.strictEqual(renamed.attributes.city, "Shelbyville")

          // null clears a nullable field.
          const cleared = assertSingle(
            yield* call("PATCH", `/api/v1/members/${before.id}`, {
              key,
              body: { industry: null, secondary_industries: null, employee_count: null, member_since: null, email: null, about: null }
            }),
            200
          )
          for (const field of ["industry", "secondary_industries", "employee_count", "member_since", "email", "about"]) {
            assert.isNull(cleared.attributes[field], field)
          }
          assert.strictEqual(cleared.attributes.website, FULL.website)
        }))

      it.effect("PATCH that changes nothing (empty body, or the same values) leaves updated_at and everything else unchanged", () =>
        Effect.gen(function*() {
          const { key } = yield* writer
          const before = assertSingle(yield* call("POST", "/api/v1/members", { key, body: FULL }), 201)
          const empty = assertSingle(yield* call("PATCH", `/api/v1/members/${before.id}`, { key, body: {} }), 200)
          assert.deepStrictEqual(empty, before)
          const same = assertSingle(yield* call("PATCH", `/api/v1/members/${before.id}`, { key, body: FULL }), 200)
          assert.deepStrictEqual(same, before)
          const sameSome = assertSingle(
            yield* call("PATCH", `/api/v1/members/${before.id}`, { key, body: { name: FULL.name, secondary_industries: FULL.secondary_industries } }),
            200
          )
          assert.deepStrictEqual(sameSome, before)
        }))

      it.effect("PATCH: each kind of rule answers 422 with its message on its field, and the member is unchanged", () =>
        Effect.gen(function*() {
          const { key } = yield* writer
          const before = assertSingle(yield* call("POST", "/api/v1/members", { key, body: FULL }), 201)
          for (const [rule, body, errors] of RULES) {
            const reply = yield* call("PATCH", `/api/v1/members/${before.id}`, { key, body: { city: "Changed", ...body } })
            assert.deepStrictEqual([reply.status, reply.body], [422, { message: Object.values(errors)[0]![0], errors }], rule)
          }
          assert.deepStrictEqual(assertSingle(yield* call("GET", `/api/v1/members/${before.id}`, { key }), 200), before)
          const phone = "😀".repeat(50)
          assert.strictEqual(assertSingle(yield* call("PATCH", `/api/v1/members/${before.id}`, { key, body: { phone } }), 200).attributes.phone, phone)
        }))

      it.effect("PATCH slug: another member's slug is a 422 on slug; its own slug is fine", () =>
        Effect.gen(function*() {
          const { key } = yield* writer
          const first = assertSingle(yield* call("POST", "/api/v1/members", { key, body: { name: "First Co", status: "active" } }), 201)
          const second = assertSingle(yield* call("POST", "/api/v1/members", { key, body: { name: "Second Co", status: "active" } }), 201)
          const taken = yield* call("PATCH", `/api/v1/members/${second.id}`, { key, body: { slug: "first-co", city: "Moved" } })
          assert.deepStrictEqual([taken.status, taken.body], [422, {
            message: "The slug has already been taken.",
            errors: { slug: ["The slug has already been taken."] }
          }])
          assert.deepStrictEqual(assertSingle(yield* call("GET", `/api/v1/members/${second.id}`, { key }), 200), second)
          const own = assertSingle(yield* call("PATCH", `/api/v1/members/${first.id}`, { key, body: { slug: "first-co" } }), 200)
          assert.deepStrictEqual(own, first)
          const fresh = assertSingle(yield* call("PATCH", `/api/v1/members/${second.id}`, { key, body: { slug: "second-and-best" } }), 200)
          assert.strictEqual(fresh.attributes.slug, "second-and-best")
        }))
    })
  })
}
