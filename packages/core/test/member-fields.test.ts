/**
 * The member's fields (docs/api.md "Members") checked on the schemas directly: every bound
 * of every field, derived from the one declaration, with the messages integrators see. The HTTP
 * suites check one case of each kind of rule over the wire.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import { fieldErrors, type Field, MemberCreate, MemberResource, MemberUpdate } from "../src/index.ts"

const fields = MemberResource.fields as Readonly<Record<string, Field.Field>>
const writable = Object.entries(fields).filter(([, f]) => !f.presence.startsWith("readOnly"))
const label = (field: string) => field.replace(/_/g, " ")

/** The 422 `errors` of decoding `input` with `schema`, or undefined when it decodes. */
const errorsOf = (schema: Schema.Top, input: unknown) => {
  const exit = Schema.decodeUnknownExit(schema as Schema.Codec<unknown, unknown>)(input, { errors: "all" })
  if (Exit.isSuccess(exit)) return undefined
  const failure = exit.cause.reasons[0]
  assert.strictEqual(failure?._tag, "Fail")
  return fieldErrors((failure as { readonly error: Schema.SchemaError }).error.issue, "body")
}

/** A valid create body with `field` set to `value`. */
const withField = (field: string, value: unknown): Record<string, unknown> => ({ ...MemberResource.example, custom_fields: undefined, [field]: value })

/** A string of `n` characters, each two UTF-16 units (lengths count characters, docs/api.md "Members"). */
const chars = (n: number) => "😀".repeat(n)

describe("member fields", () => {
  it("the example of every field is valid, on create and on update", () => {
    assert.isUndefined(errorsOf(MemberCreate, withField("name", MemberResource.example.name)))
    assert.isUndefined(errorsOf(MemberUpdate, withField("name", MemberResource.example.name)))
  })

  for (const [field, { kind, presence }] of writable) {
    const bounds = kind.bounds
    const refuse = (value: unknown, message: string, at = field) =>
      assert.deepStrictEqual(errorsOf(MemberCreate, withField(field, value)), { [at]: [message] }, `${field}=${String(value).slice(0, 30)}`)
    // A fixed set of values has one message for anything else, the wrong type included.
    const wrongType = bounds.values !== undefined
      ? `The selected ${label(field)} is invalid (expected one of: ${bounds.values.join(", ")}).`
      : `The ${label(field)} field must be ${kind.expected}.`
    const accept = (value: unknown) =>
      assert.isUndefined(errorsOf(MemberCreate, withField(field, value)), `${field}=${String(value).slice(0, 30)}`)

    it(`${field}: a value of the wrong type is refused`, () => {
      refuse(typeof kind.example === "string" || Array.isArray(kind.example) ? 42 : "text", wrongType)
    })

    it(`${field}: ${presence === "required" ? "required on create, never null" : "optional, null allowed"}`, () => {
      const { [field]: _, ...without } = withField(field, null)
      if (presence === "required") {
        assert.deepStrictEqual(errorsOf(MemberCreate, without), { [field]: [`The ${label(field)} field is required.`] })
        refuse(null, wrongType)
        assert.deepStrictEqual(errorsOf(MemberUpdate, { [field]: null }), { [field]: [wrongType] })
      } else {
        assert.isUndefined(errorsOf(MemberCreate, without))
        accept(null)
      }
      assert.isUndefined(errorsOf(MemberUpdate, {}))
    })

    if (bounds.maxLength !== undefined && bounds.maxItems === undefined) {
      const max = bounds.maxLength
      it(`${field}: at most ${max} characters, counted as characters`, () => {
        const fill = field === "email" ? (n: number) => `${"a".repeat(n - 12)}@example.com` : field === "slug" ? (n: number) => "a".repeat(n) : chars
        accept(fill(max))
        refuse(fill(max + 1), `The ${label(field)} field must not be greater than ${max} characters.`)
        if (field !== "email" && field !== "slug") refuse("a\u0000b", `The ${label(field)} field must not contain NUL characters.`)
      })
    }

    if (bounds.min !== undefined && bounds.max !== undefined) {
      it(`${field}: a whole number from ${bounds.min} to ${bounds.max}`, () => {
        accept(bounds.min)
        accept(bounds.max)
        refuse(bounds.min! - 1, `The ${label(field)} field must be at least ${bounds.min}.`)
        refuse(bounds.max! + 1, `The ${label(field)} field must not be greater than ${bounds.max}.`)
        refuse(1.5, `The ${label(field)} field must be an integer.`)
        refuse("12", `The ${label(field)} field must be an integer.`)
      })
    }

    if (bounds.values !== undefined) {
      it(`${field}: one of ${bounds.values.join(", ")}`, () => {
        for (const value of bounds.values!) accept(value)
        for (const value of ["Active", "deleted", ""]) {
          refuse(value, `The selected ${label(field)} is invalid (expected one of: ${bounds.values!.join(", ")}).`)
        }
      })
    }

    if (bounds.maxItems !== undefined) {
      it(`${field}: at most ${bounds.maxItems} items of at most ${bounds.maxLength} characters`, () => {
        accept(Array.from({ length: bounds.maxItems! }, () => "Retail"))
        accept([chars(bounds.maxLength!)])
        refuse(Array.from({ length: bounds.maxItems! + 1 }, () => "Retail"), `The ${label(field)} field must not have more than ${bounds.maxItems} items.`)
        refuse(["ok", chars(bounds.maxLength! + 1)], `The ${label(field)} field must not be greater than ${bounds.maxLength} characters.`, `${field}.1`)
        refuse([42], `The ${label(field)} field must be a string.`, `${field}.0`)
      })
    }
  }

  it("name must not be blank", () => {
    for (const blank of ["", "   "]) {
      assert.deepStrictEqual(errorsOf(MemberCreate, withField("name", blank)), { name: ["The name field is required."] })
    }
  })

  it("email must look like an address", () => {
    for (const bad of ["not-an-email", "a@b", "a b@example.com", "@example.com"]) {
      assert.deepStrictEqual(errorsOf(MemberCreate, withField("email", bad)), { email: ["The email field must be a valid email address."] })
    }
  })

  it("member_since must be a real calendar date, YYYY-MM-DD", () => {
    assert.isUndefined(errorsOf(MemberCreate, withField("member_since", "2000-02-29")))
    for (const bad of ["2023-02-29", "2024-13-01", "2024-1-1", "01/02/2024", "2024-01-01T00:00:00Z"]) {
      assert.deepStrictEqual(errorsOf(MemberCreate, withField("member_since", bad)), {
        member_since: ["The member since field must be a valid date (YYYY-MM-DD)."]
      })
    }
  })

  it("slug: lower-case letters and digits in groups joined by single hyphens", () => {
    for (const bad of ["Acme", "acme--sons", "-acme", "acme-", "acme sons", "acme_sons", "ACME-SONS", ""]) {
      assert.deepStrictEqual(errorsOf(MemberCreate, withField("slug", bad)), {
        slug: ["The slug field must be lower-case letters and digits in groups joined by single hyphens."]
      })
    }
  })

  it("several failing fields are all reported", () => {
    assert.deepStrictEqual(Object.keys(errorsOf(MemberCreate, { status: "bogus", phone: "x".repeat(51), employee_count: -5 }) ?? {}).sort(), [
      "employee_count",
      "name",
      "phone",
      "status"
    ])
  })
})

describe("member defaults and changes", () => {
  it("a new member takes null for every omitted nullable field, true for directory_visible and {} for custom fields", () => {
    const values = MemberResource.defaults({ name: "Bare Co", status: "active", directory_visible: null })
    for (const [field, f] of writable) {
      if (f.presence === "nullable") assert.isNull(values[field as keyof typeof values], field)
    }
    assert.strictEqual(values.directory_visible, true)
    assert.deepStrictEqual(values.custom_fields, {})
  })

  it("an update changes only the fields that differ; null keeps directory_visible; custom fields merge", () => {
    const current = MemberResource.defaults({ ...MemberResource.example, custom_fields: { tier: "Gold", notes: "x" } })
    assert.deepStrictEqual(MemberResource.changes(current, { ...MemberResource.example, custom_fields: { tier: "Gold" } }), {})
    assert.deepStrictEqual(MemberResource.changes(current, { city: "Springfield", name: current.name, directory_visible: null }), {
      city: "Springfield"
    })
    assert.deepStrictEqual(MemberResource.changes(current, { secondary_industries: ["Retail", "Wholesale"], custom_fields: { tier: "Silver" } }), {
      custom_fields: { tier: "Silver", notes: "x" }
    })
    assert.deepStrictEqual(MemberResource.changes(current, { industry: null }), { industry: null })
  })
})
