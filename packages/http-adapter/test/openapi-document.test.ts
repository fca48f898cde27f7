/**
 * The served OpenAPI document (`GET /api/v1/openapi.json`) says what the server does, as generated
 * clients and validators read it (docs/api.md "Documentation"): each rule it states is checked
 * against the server's own answers, so the document neither trusts a rule the server does not
 * keep nor misses one it does. The document is the same on every storage runtime.
 */
import { assert, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Core from "@chamber/core"
import { CURSOR_PATTERN, EventKinds, Outbox } from "@chamber/core"
import { pgliteRuntime } from "@chamber/pg-adapter/testing"
import { call, chamberWithKey, type Reply, serverOn } from "./fixture.ts"

type Json = Record<string, any>

const served = Effect.map(call("GET", "/api/v1/openapi.json"), (reply) => {
  assert.strictEqual(reply.status, 200)
  return reply.body as Json
})

/** `#/components/...` as the object it names. */
const deref = (doc: Json, node: Json): Json => {
  if (typeof node?.$ref !== "string") return node
  return deref(doc, node.$ref.slice(2).split("/").reduce((o: Json, k: string) => o[k], doc))
}

/** A property's schema without its null branch, and whether it has one. */
const branch = (schema: Json): { readonly nullable: boolean; readonly schema: Json } => {
  const members: Array<Json> | undefined = schema.anyOf
  if (members === undefined) return { nullable: false, schema }
  const rest = members.filter((m) => m.type !== "null")
  return { nullable: rest.length < members.length, schema: rest.length === 1 ? rest[0]! : { anyOf: rest } }
}

const property = (doc: Json, schema: string, name: string) => branch(doc.components.schemas[schema].properties[name])

/** Whether `value` matches the string schema's pattern (JSON Schema patterns are ECMA-262, read as Unicode). */
const matches = (schema: Json, value: string) => {
  assert.isString(schema.pattern, `no pattern in ${JSON.stringify(schema)}`)
  return new RegExp(schema.pattern, "u").test(value)
}

const operations = (doc: Json) =>
  Object.entries(doc.paths as Json).flatMap(([path, item]) =>
    Object.entries(item as Json).map(([method, op]) => ({ name: `${method.toUpperCase()} ${path}`, path, op: op as Json }))
  )

/** Every request body schema of the document, by name. */
const requestSchemas = (doc: Json) =>
  new Set(
    operations(doc)
      .map(({ op }) => op.requestBody?.content?.["application/json"]?.schema?.$ref as string | undefined)
      .filter((r): r is string => r !== undefined)
      .map((r) => r.split("/").pop()!)
  )

/** Every string schema inside `schema` (following references), with its path. */
const strings = (doc: Json, schema: Json, path: string, seen = new Set<Json>()): Array<readonly [string, Json]> => {
  const node = deref(doc, schema)
  if (seen.has(node)) return []
  seen.add(node)
  const inner: Array<readonly [string, Json]> = [
    ...Object.entries((node.properties ?? {}) as Json).flatMap(([k, v]) => strings(doc, v, `${path}.${k}`, seen)),
    ...(node.items === undefined ? [] : strings(doc, node.items, `${path}[]`, seen)),
    ...((node.anyOf ?? []) as Array<Json>).flatMap((v) => strings(doc, v, path, seen))
  ]
  return node.type === "string" ? [[path, node], ...inner] : inner
}

/**
 * Whether `body` fits `schema` as far as the error shapes go: an object with every required
 * property, no other where additionalProperties is false, one of `anyOf`.
 */
const fits = (doc: Json, schema: Json, body: Json): boolean => {
  const node = deref(doc, schema)
  if (node.anyOf !== undefined) return (node.anyOf as Array<Json>).some((s) => fits(doc, s, body))
  if (node.type !== "object" || typeof body !== "object" || body === null) return false
  const keys = Object.keys(body)
  if (!((node.required ?? []) as Array<string>).every((k) => keys.includes(k))) return false
  return node.additionalProperties !== false || keys.every((k) => k in (node.properties ?? {}))
}

const assertRefused = (reply: Reply, field: string, label: string) => {
  assert.strictEqual(reply.status, 422, `${label}: ${JSON.stringify(reply.body)}`)
  assert.property(reply.body.errors, field, label)
}

layer(serverOn(pgliteRuntime), { timeout: 120_000 })((it) => {
  it.effect("1. formats and patterns: email, the two URLs, the slug, non-blank strings and U+0000 as the server refuses them", () =>
    Effect.gen(function*() {
      const doc = yield* served
      const { key } = yield* chamberWithKey("all")
      const emails = [
        ...["MemberAttributes", "MemberCreate", "MemberUpdate", "ContactAttributes", "ContactCreate", "ContactUpdate", "SubscriberCreate"].map((s) =>
          [s, property(doc, s, "email").schema] as const
        ),
        ...["/api/v1/members/search", "/api/v1/contacts/search"].map((p) =>
          [p, doc.paths[p].get.parameters.find((q: Json) => q.name === "email").schema as Json] as const
        )
      ]
      for (const [where, schema] of emails) {
        assert.strictEqual(schema.format, "email", where)
        assert.isTrue(matches(schema, "ann.lee@acme.example"), where)
        for (const bad of ["ann.lee", "ann lee@acme.example", "ann@acme", "ann@acme.exa\u0000mple"]) assert.isFalse(matches(schema, bad), `${where}: ${bad}`)
      }
      assertRefused(yield* call("POST", "/api/v1/members", { key, body: { name: "Acme", status: "active", email: "ann@acme" } }), "email", "member email")
      assertRefused(yield* call("GET", "/api/v1/contacts/search?email=ann.lee", { key }), "email", "search email")

      const hookUrl = property(doc, "HookCreate", "url").schema
      assert.strictEqual(hookUrl.format, "uri")
      assert.strictEqual(hookUrl.maxLength, 500)
      for (const good of ["https://hooks.example.com/chamber", "HTTPS://hooks.example.com"]) assert.isTrue(matches(hookUrl, good), good)
      for (const bad of ["http://hooks.example.com", "https:///nohost", "ftp://hooks.example.com"]) {
        assert.isFalse(matches(hookUrl, bad), bad)
        assertRefused(yield* call("POST", "/api/v1/hooks", { key, body: { url: bad, events: ["member.created"] } }), "url", bad)
      }
      const ctaUrl = property(doc, "DealCreate", "cta_url").schema
      assert.strictEqual(ctaUrl.format, "uri")
      for (const good of ["http://acme.example/deal", "HTTPS://acme.example"]) assert.isTrue(matches(ctaUrl, good), good)
      const member = (yield* call("POST", "/api/v1/members", { key, body: { name: "Acme", status: "active" } })).body.data.id
      assert.isFalse(matches(ctaUrl, "ftp://acme.example"))
      assertRefused(yield* call("POST", "/api/v1/deals", { key, body: { member_id: member, title: "Deal", cta_url: "ftp://acme.example" } }), "cta_url", "cta_url")

      const slug = property(doc, "MemberCreate", "slug").schema
      assert.isTrue(matches(slug, "acme-sons-2"))
      for (const bad of ["Acme", "acme--sons", "-acme", "acme sons"]) {
        assert.isFalse(matches(slug, bad), bad)
        assertRefused(yield* call("POST", "/api/v1/members", { key, body: { name: "Acme", status: "active", slug: bad } }), "slug", bad)
      }

      // A required string that must not be blank: at least one character, not only white space.
      const filled: ReadonlyArray<readonly [string, string]> = [
        ["MemberCreate", "name"],
        ["MemberUpdate", "name"],
        ["ContactCreate", "first_name"],
        ["ContactCreate", "last_name"],
        ["ContactUpdate", "first_name"],
        ["ContactUpdate", "last_name"],
        ["EventCreate", "title"],
        ["EventUpdate", "title"],
        ["DealCreate", "title"],
        ["DealUpdate", "title"],
        ["InvoiceLineCreate", "description"]
      ]
      for (const [schema, name] of filled) {
        const s = property(doc, schema, name).schema
        assert.strictEqual(s.minLength, 1, `${schema}.${name}`)
        assert.isFalse(matches(s, " \t"), `${schema}.${name}`)
        assert.isTrue(matches(s, " Acme "), `${schema}.${name}`)
      }
      assertRefused(yield* call("POST", "/api/v1/members", { key, body: { name: "  ", status: "active" } }), "name", "blank name")
      assertRefused(
        yield* call("POST", "/api/v1/invoices", { key, body: { member_id: member, lines: [{ description: "", unit: "1.00" }] } }),
        "lines.0.description",
        "empty line"
      )

      // Every string a request may send, but dates, date-times and fixed values, refuses U+0000 in its pattern.
      let checked = 0
      for (const name of requestSchemas(doc)) {
        for (const [path, s] of strings(doc, doc.components.schemas[name], name)) {
          if (s.enum !== undefined || s.format === "date" || s.format === "date-time") continue
          checked++
          assert.isFalse(matches(s, "a\u0000b"), `${path} states no rule against U+0000`)
        }
      }
      assert.isAtLeast(checked, 40)
      assertRefused(yield* call("POST", "/api/v1/members", { key, body: { name: "Ac\u0000me", status: "active" } }), "name", "NUL")
    }))

  it.effect("2. nullability: a property of an update is nullable exactly where the server takes a null", () =>
    Effect.gen(function*() {
      const doc = yield* served
      const { key } = yield* chamberWithKey("all")
      const create = (path: string, body: unknown) =>
        Effect.map(call("POST", path, { key, body }), (reply) => {
          assert.strictEqual(reply.status, 201, `${path}: ${JSON.stringify(reply.body)}`)
          return reply.body.data.id as number
        })
      const member = yield* create("/api/v1/members", { name: "Acme", status: "active" })
      const rows: Record<string, string> = {
        MemberUpdate: `/api/v1/members/${member}`,
        ContactUpdate: `/api/v1/contacts/${yield* create("/api/v1/contacts", { first_name: "Ann", last_name: "Lee" })}`,
        EventUpdate: `/api/v1/events/${yield* create("/api/v1/events", { title: "Gala", starts_at: "2027-01-10T18:00:00Z" })}`,
        DealUpdate: `/api/v1/deals/${yield* create("/api/v1/deals", { member_id: member, title: "Deal" })}`
      }
      const updates = operations(doc).filter(({ op }) => op.operationId?.endsWith(".update"))
      assert.sameMembers(updates.map(({ op }) => op.requestBody.content["application/json"].schema.$ref.split("/").pop()), Object.keys(rows))
      for (const [schema, path] of Object.entries(rows)) {
        for (const [name, s] of Object.entries(doc.components.schemas[schema].properties as Json)) {
          const reply = yield* call("PATCH", path, { key, body: { [name]: null } })
          assert.strictEqual(branch(s).nullable, reply.status === 200, `${schema}.${name}: null answered ${reply.status} ${JSON.stringify(reply.body)}`)
        }
      }
      assert.isFalse(property(doc, "EventUpdate", "event_type").nullable)
      assert.isFalse(property(doc, "EventUpdate", "starts_at").nullable)
    }))

  it.effect("3. money: a payment's methods without refund, amounts greater than zero, and the ceiling of amounts and totals", () =>
    Effect.gen(function*() {
      const doc = yield* served
      const { key } = yield* chamberWithKey("all")
      const member = (yield* call("POST", "/api/v1/members", { key, body: { name: "Acme", status: "active" } })).body.data.id
      const invoice = (yield* call("POST", "/api/v1/invoices", { key, body: { member_id: member, lines: [{ description: "Dues", unit: "450.00" }] } })).body.data.id
      assert.strictEqual((yield* call("POST", `/api/v1/invoices/${invoice}/issue`, { key })).status, 200)
      const pay = (body: Json) => call("POST", `/api/v1/invoices/${invoice}/payments`, { key, body })

      const method = property(doc, "PaymentCreate", "method").schema
      assert.sameMembers(method.enum, ["card", "check", "cash", "ach", "comp", "other"])
      const refund = yield* pay({ method: "refund", amount: "1.00" })
      assert.strictEqual(refund.status, 422, JSON.stringify(refund.body))

      const amount = property(doc, "PaymentCreate", "amount").schema
      for (const zero of ["0", "0.0", "0.00"]) {
        assert.isFalse(matches(amount, zero), zero)
        assertRefused(yield* pay({ method: "check", amount: zero }), "amount", zero)
      }
      for (const good of ["0.01", "0.5", "225.00", "90071992547409.91"]) assert.isTrue(matches(amount, good), good)
      const unit = property(doc, "InvoiceLineCreate", "unit").schema
      assert.isTrue(matches(unit, "0.00"))
      // The ceiling: stated in words on both amounts and the create of a draft, and kept by the server.
      for (const [where, text] of [["amount", amount.description], ["unit", unit.description], ["POST /invoices", doc.paths["/api/v1/invoices"].post.description]]) {
        assert.include(text, "90071992547409.91", where)
      }
      assertRefused(yield* pay({ method: "check", amount: "90071992547409.92" }), "amount", "past the ceiling")
      const tooMuch = yield* call("POST", "/api/v1/invoices", {
        key,
        body: { member_id: member, lines: [{ description: "A", unit: "90071992547409.91" }, { description: "B", unit: "0.01" }] }
      })
      assertRefused(tooMuch, "lines", "a total past the ceiling")
      for (const cents of ["total_cents", "balance_cents"]) assert.strictEqual(property(doc, "InvoiceAttributes", cents).schema.maximum, 9007199254740991)
    }))

  it.effect("4. headers: every response declares the fields the server sends with it, and they come", () =>
    Effect.gen(function*() {
      const doc = yield* served
      const declared = (response: Json) => Object.keys(response.headers ?? {}).map((h) => h.toLowerCase())
      for (const { name, op } of operations(doc)) {
        for (const [status, response] of Object.entries(op.responses as Json)) {
          const fields = declared(response)
          const label = `${name} ${status}`
          assert.include(fields, "x-request-id", label)
          if (status === "401") assert.include(fields, "www-authenticate", label)
          else assert.includeMembers(fields, ["ratelimit", "ratelimit-policy"], label)
          if (status === "429" || status === "503") assert.include(fields, "retry-after", label)
          for (const [header, value] of Object.entries(response.headers as Json)) {
            assert.isObject(deref(doc, value).schema, `${label} ${header}`)
          }
        }
      }
      const { key } = yield* chamberWithKey("members:read")
      const ok = yield* call("GET", "/api/v1/members", { key })
      const refused = yield* call("GET", "/api/v1/members")
      assert.deepStrictEqual([ok.status, refused.status], [200, 401])
      for (const h of ["x-request-id", "ratelimit", "ratelimit-policy"]) assert.isString(ok.headers[h], h)
      assert.deepStrictEqual([typeof refused.headers["x-request-id"], refused.headers["www-authenticate"]], ["string", "Bearer"])
    }))

  it.effect("5. paging and sorting: page has no upper bound; each list offers its own sort values and still takes any other", () =>
    Effect.gen(function*() {
      const doc = yield* served
      const { key } = yield* chamberWithKey("all")
      // Each list sorts by its resource's sort columns (core's `<Resource>SortColumns`, `updated_at`
      // among them): the resource being the last its path names (`/events/{event}/registrations`).
      const columns = new Map<string, ReadonlyArray<string>>(Object.entries(Core).flatMap(([name, value]) => {
        const resource = /^(\w+)SortColumns$/.exec(name)?.[1]
        return resource === undefined ? [] : [[`${resource.toLowerCase()}s`, value as ReadonlyArray<string>] as const]
      }))
      const sorts: Record<string, ReadonlyArray<string>> = {}
      for (const { name, path } of operations(doc)) {
        const last = path.split("/").at(-1)!
        const resource = last === "search" ? path.split("/").at(-2)! : last
        if (name.startsWith("GET ") && columns.has(resource)) sorts[path] = columns.get(resource)!
      }
      assert.isAtLeast(Object.keys(sorts).length, 12)
      assert.isTrue(Object.values(sorts).every((c) => c.includes("updated_at")))
      const filter: Record<string, string> = { "/api/v1/members/search": "name=acme&", "/api/v1/contacts/search": "email=ann%40acme.example&" }
      const event = yield* call("POST", "/api/v1/events", { key, body: { title: "Gala", starts_at: "2027-01-10T18:00:00Z" } })
      const concrete = (path: string) => path.replace("{event}", String(event.body.data.id))
      const withSort = operations(doc).filter(({ op }) => op.parameters?.some((p: Json) => p.name === "sort"))
      assert.sameMembers(withSort.map(({ path }) => path), Object.keys(sorts))
      for (const { path, op } of withSort) {
        const sort = op.parameters.find((p: Json) => p.name === "sort").schema
        const offered = (sort.anyOf as Array<Json>).find((s) => s.enum !== undefined)
        assert.sameMembers(offered?.enum ?? [], sorts[path]!.flatMap((c) => [c, `-${c}`]), path)
        assert.isTrue((sort.anyOf as Array<Json>).some((s) => s.type === "string" && s.enum === undefined && s.pattern === undefined), `${path}: any string`)
        for (const value of ["-created_at", "shoe_size", "-", ""]) {
          const reply = yield* call("GET", `${concrete(path)}?${filter[path] ?? ""}sort=${encodeURIComponent(value)}`, { key })
          assert.strictEqual(reply.status, 200, `${path} sort=${value}: ${JSON.stringify(reply.body)}`)
        }
      }
      const paged = operations(doc).filter(({ op }) => op.parameters?.some((p: Json) => p.name === "page"))
      assert.isAtLeast(paged.length, 12)
      for (const { name, op } of paged) {
        const page = op.parameters.find((p: Json) => p.name === "page").schema
        assert.deepStrictEqual([page.type, page.minimum, page.maximum, page.format], ["integer", 1, undefined, undefined], name)
      }
      const far = yield* call("GET", "/api/v1/members?page=18446744073709551616", { key })
      assert.deepStrictEqual([far.status, far.body.data], [200, []])
    }))

  it.effect("6. custom_fields: an object of any JSON values", () =>
    Effect.gen(function*() {
      const doc = yield* served
      for (const schema of ["MemberAttributes", "ContactAttributes"]) {
        const fields = property(doc, schema, "custom_fields").schema
        assert.strictEqual(fields.type, "object", schema)
        assert.isTrue(fields.additionalProperties === true || (typeof fields.additionalProperties === "object" && Object.keys(fields.additionalProperties).length === 0), `${schema}: ${JSON.stringify(fields)}`)
      }
    }))

  it.effect("7. every success response has an example, and the draft invoice's is a draft as the server makes it", () =>
    Effect.gen(function*() {
      const doc = yield* served
      for (const { name, op } of operations(doc)) {
        for (const [status, response] of Object.entries(op.responses as Json)) {
          if (!status.startsWith("2")) continue
          const media = response.content["application/json"]
          const examples = media.example !== undefined ? [media.example] : media.examples ?? deref(doc, media.schema).examples
          assert.isNotEmpty(examples ?? [], `${name} ${status} has no example`)
        }
      }
      const shown = deref(doc, doc.paths["/api/v1/invoices"].post.responses["201"].content["application/json"].schema).examples[0].data
      const { key } = yield* chamberWithKey("all")
      const member = (yield* call("POST", "/api/v1/members", { key, body: { name: "Acme", status: "active" } })).body.data.id
      const made = (yield* call("POST", "/api/v1/invoices", { key, body: { member_id: member, lines: [{ description: "Dues", unit: "475.00" }] } })).body.data
      assert.sameMembers(Object.keys(shown.attributes), Object.keys(made.attributes))
      const draftFacts = (a: Json) => [a.status, a.number, a.issued_at, a.due_on, a.voided_at, a.amount_paid_cents, a.balance_cents === a.total_cents]
      assert.deepStrictEqual(draftFacts(shown.attributes), draftFacts(made.attributes))
      assert.deepStrictEqual(draftFacts(made.attributes), ["draft", null, null, null, null, 0, true])
    }))

  it.effect("8. no text of the document points at a file a browser cannot open", () =>
    Effect.gen(function*() {
      const text = JSON.stringify(yield* served)
      assert.notMatch(text, /[\w/-]+\.md\b/)
    }))

  it.effect("10. every POST and PATCH declares the 422s it may answer: a reused Idempotency-Key's `{message}` alone, a malformed one's and a validation's with `errors`", () =>
    Effect.gen(function*() {
      const doc = yield* served
      const { key } = yield* chamberWithKey("all")
      const reuse = (path: string, first: Json, second: Json) =>
        Effect.gen(function*() {
          const idem = `reuse-${path}-${Math.random()}`
          yield* call("POST", path, { key, body: first, headers: { "idempotency-key": idem } })
          const reply = yield* call("POST", path, { key, body: second, headers: { "idempotency-key": idem } })
          assert.deepStrictEqual([reply.status, Object.keys(reply.body)], [422, ["message"]], reply.text)
          return reply.body as Json
        })
      const reused = yield* reuse("/api/v1/members", { name: "Once", status: "active" }, { name: "Twice", status: "active" })
      const malformed = (yield* call("POST", "/api/v1/members", { key, body: { name: "Key", status: "active" }, headers: { "idempotency-key": "a b" } })).body
      const invalid = (yield* call("POST", "/api/v1/members", { key, body: { name: "" } })).body
      assert.deepStrictEqual([Object.keys(malformed), Object.keys(invalid)], [["message", "errors"], ["message", "errors"]])
      let checked = 0
      for (const { name, op } of operations(doc)) {
        if (!name.startsWith("POST ") && !name.startsWith("PATCH ")) continue
        const schema = op.responses["422"]?.content?.["application/json"]?.schema
        assert.isDefined(schema, `${name} declares no 422`)
        for (const [which, body] of [["reused key", reused], ["malformed key", malformed]] as const) {
          assert.isTrue(fits(doc, schema, body), `${name}: the ${which} 422 ${JSON.stringify(body)} fits none of ${JSON.stringify(schema)}`)
        }
        if (op.requestBody !== undefined) assert.isTrue(fits(doc, schema, invalid), `${name}: the validation 422`)
        checked++
      }
      assert.isAtLeast(checked, 15)
      // An operation without a body of its own answers the reused key's 422 too.
      const hook = (yield* call("POST", "/api/v1/hooks", { key, body: { url: "https://hooks.example.com/reuse", events: ["member.created"] } })).body
      const idem = "reuse-a-bodiless-one"
      const rotate = `/api/v1/hooks/${hook.id}/rotate-secret`
      const first = yield* call("POST", rotate, { key, headers: { "idempotency-key": idem } })
      assert.strictEqual(first.status, 200, first.text)
      const again = yield* call("POST", rotate, { key, body: { previous_expires_in: 0 }, headers: { "idempotency-key": idem } })
      assert.deepStrictEqual([again.status, Object.keys(again.body)], [422, ["message"]], again.text)
    }))

  it.effect("11. rotate-secret's body is optional, and only there; the feed's `types` is a comma-separated list of the event kinds, `after` a cursor's form", () =>
    Effect.gen(function*() {
      const doc = yield* served
      const rotate = doc.paths["/api/v1/hooks/{hook}/rotate-secret"].post.requestBody
      assert.deepStrictEqual(rotate, { content: { "application/json": { schema: { $ref: "#/components/schemas/RotateSecret" } } }, required: false })
      for (const { name, op } of operations(doc)) {
        if (op.requestBody !== undefined && !name.endsWith("/rotate-secret")) assert.isTrue(op.requestBody.required, name)
      }

      const parameters = doc.paths["/api/v1/changes"].get.parameters as Array<Json>
      const types = parameters.find((p) => p.name === "types")!
      assert.deepStrictEqual([types.style, types.explode, types.schema.type], ["form", false, "array"])
      assert.deepStrictEqual(types.schema.items, { type: "string", enum: [...EventKinds] })
      const { tenant, key } = yield* chamberWithKey("all")
      // What a client makes of the declaration: the kinds joined by commas, one value.
      const all = yield* call("GET", `/api/v1/changes?types=${EventKinds.join(",")}`, { key })
      assert.strictEqual(all.status, 200, all.text)
      const notAKind = yield* call("GET", "/api/v1/changes?types=member.created,member.deleted", { key })
      assert.deepStrictEqual([notAKind.status, Object.keys(notAKind.body.errors)], [422, ["types"]])

      const after = parameters.find((p) => p.name === "after")!.schema
      assert.strictEqual(after.pattern, CURSOR_PATTERN)
      const feed = (cursor: string) => call("GET", `/api/v1/changes?after=${cursor}`, { key })
      // Every cursor the server gives matches, and so does the v1 form it still reads.
      yield* call("POST", "/api/v1/members", { key, body: { name: "Fed", status: "active" } })
      const given = [
        "head",
        (yield* call("GET", "/api/v1/changes", { key })).body.meta.next_cursor,
        (yield* feed("head")).body.meta.next_cursor,
        Buffer.from("v1.1").toString("base64url"),
        Buffer.from("v2.0").toString("base64url"),
        Buffer.from("v2.9223372036854775807").toString("base64url")
      ]
      for (const cursor of given) {
        assert.isTrue(matches(after, cursor), cursor)
        assert.isAtMost(cursor.length, after.maxLength, cursor)
      }
      for (const cursor of given.slice(0, 4)) assert.strictEqual((yield* feed(cursor)).status, 200, cursor)
      // What does not match is refused by the server as malformed.
      for (const bad of ["nope", "heads", "djMuMQ", "djIuMQ==", "djIu", Buffer.from("v2.1a").toString("base64url"), Buffer.from("v2.12345678901234567890").toString("base64url")]) {
        assert.isFalse(matches(after, bad), bad)
        const reply = yield* feed(bad)
        assert.deepStrictEqual([reply.status, Object.keys(reply.body.errors ?? {})], [422, ["after"]], `${bad}: ${reply.text}`)
      }
    }))

  it.effect("9. the webhooks section: every event kind and ping, `data` as the resource's own schema, an example, as a delivery carries it", () =>
    Effect.gen(function*() {
      const doc = yield* served
      assert.strictEqual(doc.openapi, "3.1.0")
      assert.deepStrictEqual(Object.keys(doc.webhooks), [...EventKinds, "ping"])
      const resources: Record<string, string> = {
        member: "Member",
        contact: "Contact",
        invoice: "Invoice",
        event: "Event",
        "event.registration": "Registration",
        payment: "Payment",
        deal: "Deal",
        sponsorship: "Sponsorship",
        placement: "Placement",
        booking: "Booking"
      }
      for (const kind of EventKinds) {
        const media = doc.webhooks[kind].post.requestBody.content["application/json"]
        const resource = resources[kind.slice(0, kind.lastIndexOf("."))]!
        assert.deepStrictEqual(media.schema.properties.data, { $ref: `#/components/schemas/${resource}` }, kind)
        assert.deepStrictEqual(media.schema.properties.type.enum, [kind])
        assert.deepStrictEqual(media.schema.required, ["id", "type", "created_at", "data"])
        const example = media.examples[kind].value
        assert.strictEqual(example.type, kind)
        assert.deepStrictEqual(example.data, doc.components.schemas[resource].examples[0], kind)
        assert.includeMembers(doc.webhooks[kind].post.parameters.map((p: Json) => p.name), ["X-CC-Signature", "webhook-id", "webhook-timestamp", "webhook-signature"])
      }
      const ping = doc.webhooks.ping.post.requestBody.content["application/json"]
      assert.deepStrictEqual(ping.examples.ping.value.data, { hook_id: 3 })
      assert.deepStrictEqual(ping.schema.properties.data.required, ["hook_id"])

      // A member.created delivery carries exactly the fields the entry states, `data` as the member's schema has them.
      const { tenant, key } = yield* chamberWithKey("all")
      yield* call("POST", "/api/v1/hooks", { key, body: { url: "https://hooks.example.com/catalog", events: ["member.created"] } })
      yield* call("POST", "/api/v1/members", { key, body: { name: "Catalogued", status: "active" } })
      const [event] = yield* (yield* Outbox).list(tenant.id, { type: "member.created" })
      const entry = doc.webhooks["member.created"].post.requestBody.content["application/json"].schema
      assert.deepStrictEqual(Object.keys({ id: event!.id, type: event!.type, created_at: event!.created_at, data: event!.data }), Object.keys(entry.properties))
      assert.sameMembers(Object.keys((event!.data as Json).attributes), Object.keys(doc.components.schemas.MemberAttributes.properties))
    }))
})
