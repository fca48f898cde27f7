/**
 * The kinds of attribute a resource can have, each with its rules and the 422 messages
 * integrators see (docs/api.md "Errors"). A message names its field as `{field}`; the issue
 * formatter (Issues.ts) puts in the field as the API spells it, so a kind is written once
 * and used under any name. Lengths count characters (Unicode code points).
 */
import * as Schema from "effect/Schema"
import type * as SchemaAST from "effect/SchemaAST"
import * as SchemaTransformation from "effect/SchemaTransformation"

/** How a field is stored: as it is, a `date` column, a `jsonb` column, or the custom field map. */
export type Column = "value" | "date" | "timestamp" | "int8" | "json" | { readonly customFields: "member" | "contact" }

/** What a test needs to know of a kind's rules to derive valid and invalid values from it. */
export interface Bounds {
  readonly maxLength?: number
  readonly min?: number
  readonly max?: number
  readonly maxItems?: number
  readonly values?: ReadonlyArray<string>
}

export interface Kind<S extends Schema.Top> {
  readonly schema: S
  /** What a client may write, when narrower than what is shown (an event's status). */
  readonly write?: Schema.Top | undefined
  /** Completes "The {field} field must be ..." when the value has the wrong type. */
  readonly expected: string
  readonly column: Column
  /** A realistic valid value as it is sent (the wire form): the OpenAPI example and the test fixtures use it. */
  readonly example: S["Encoded"]
  readonly bounds: Bounds
}

const mustBe = (expected: string) => `The {field} field must be ${expected}.`

const codePoints = (s: string) => {
  let n = 0
  for (const _ of s) n++
  return n
}

/**
 * U+0000 is refused in every string. The OpenAPI document states it in each string's one
 * `pattern` (see `stated`), so a client or a fuzzer knows before it sends one.
 */
const noNul = Schema.makeFilter((s: string) => !s.includes("\u0000"), {
  message: "The {field} field must not contain NUL characters."
})

/** A lone UTF-16 surrogate (`"\ud800"` in JSON) is no character: it could only be stored as U+FFFD. */
const wellFormed = Schema.makeFilter((s: string) => !/\p{Cs}/u.test(s), {
  message: "The {field} field must be valid Unicode text."
})

const maxChars = (max: number) =>
  Schema.makeFilter((s: string) => s.length <= max || codePoints(s) <= max, {
    message: `The {field} field must not be greater than ${max} characters.`,
    toJsonSchema: () => ({ maxLength: max })
  })

const StringType = Schema.String.annotate({ message: mustBe("a string") })

/** What the OpenAPI document states of a string's rules: one pattern, which refuses U+0000 as well, and its format. */
export interface Stated {
  readonly pattern: string
  readonly format?: string
  readonly minLength?: number
}

/** Checks nothing: it only states `stated` in the document (a pattern is checked by the filters beside it). */
const stating = (stated: Stated) => Schema.makeFilter((_: string) => true, { toJsonSchema: () => ({ ...stated }) })

/** The pattern of a string with no other rule: no U+0000. */
const NO_NUL = "^[^\\u0000]*$"

/**
 * A string of at most `max` characters (any length without one) that also passes `rules`, stated
 * in the document by `stated`. Every rule of the kinds below is built on it.
 */
export const ruledText = (max: number | undefined, example: string, rules: ReadonlyArray<SchemaAST.Filter<string>>, stated: Stated) => {
  const length = max === undefined ? [] : [maxChars(max)]
  return {
    schema: StringType.check(noNul, wellFormed, ...length, ...rules, stating(stated)),
    expected: "a string",
    column: "value",
    example,
    bounds: max === undefined ? {} : { maxLength: max }
  } satisfies Kind<Schema.Top>
}

/** A string of at most `max` characters (any length without one). */
export const text = (max: number | undefined, example: string) => ruledText(max, example, [], { pattern: NO_NUL })

/**
 * A required string must not be blank (empty or only white space): at least one character, one
 * of them neither white space nor U+0000 (`\s` is what `trim` removes).
 */
export const filledText = (max: number, example: string) =>
  ruledText(max, example, [Schema.makeFilter((s: string) => s.trim() !== "", { message: "The {field} field is required." })], {
    minLength: 1,
    pattern: "^[^\\u0000]*[^\\s\\u0000][^\\u0000]*$"
  })

/**
 * A string matching `pattern`, described for people by `rule`. The OpenAPI document states
 * `stated`, by default the pattern itself (then written without flags, refusing U+0000).
 */
export const patterned = (max: number, pattern: RegExp, rule: string, example: string, stated: Stated = { pattern: pattern.source }) => {
  if (stated.pattern === pattern.source && pattern.flags !== "") throw new Error(`${pattern}: state a pattern without flags for the OpenAPI document`)
  return ruledText(max, example, [Schema.isPattern(pattern, { message: `The {field} field must be ${rule}.` })], stated)
}

/** An address starting with http:// or https:// (any case), as the OpenAPI document states it. */
export const HTTP_ADDRESS: Stated = { format: "uri", pattern: "^[hH][tT][tT][pP][sS]?://[^\\u0000]*$" }

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/
export const email = (max: number, example: string) => ({
  ...ruledText(max, example, [Schema.makeFilter((s: string) => EMAIL.test(s), { message: mustBe("a valid email address") })], {
    format: "email",
    pattern: "^[^\\s@\\u0000]+@[^\\s@\\u0000]+\\.[^\\s@\\u0000]+$"
  }),
  expected: "a valid email address"
})

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

const leap = (year: number) => year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)

/**
 * A day of the (proleptic Gregorian) calendar from 0001-01-01 to 9999-12-31, RFC 3339's
 * full-date without year 0000, which PostgreSQL does not have. Counted, not built with
 * `Date.UTC`, which takes years 0 to 99 for 1900 to 1999.
 */
const validDate = (s: string) => {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s)
  if (m === null) return false
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])]
  if (year < 1 || month < 1 || month > 12 || day < 1) return false
  return day <= (month === 2 && leap(year) ? 29 : DAYS_IN_MONTH[month - 1]!)
}

/** A calendar date, `YYYY-MM-DD`, stored in a `date` column. */
export const date = (example: string) => ({
  schema: Schema.String.annotate({ message: mustBe("a valid date (YYYY-MM-DD)"), format: "date" }).check(
    Schema.makeFilter(validDate, { message: mustBe("a valid date (YYYY-MM-DD)") })
  ),
  expected: "a valid date (YYYY-MM-DD)",
  column: "date",
  example,
  bounds: {}
}) satisfies Kind<Schema.Top>

const DATE_TIME = /^(\d{4}-\d{2}-\d{2})T([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,9})?)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$/

/** The first and the last moment shown in UTC as a full-date of years 0001 to 9999. */
const FIRST_MOMENT = Date.parse("0001-01-01T00:00:00.000Z")
const LAST_MOMENT = Date.parse("9999-12-31T23:59:59.999Z")

/**
 * A calendar date and a clock time that exist (no 30 February, no 25:00), with an offset, at a
 * moment whose UTC date is in years 0001 to 9999 (the form it is shown in).
 */
const validDateTime = (s: string) => {
  const m = DATE_TIME.exec(s)
  if (m === null || !validDate(m[1]!)) return false
  const at = Date.parse(s)
  return at >= FIRST_MOMENT && at <= LAST_MOMENT
}

/**
 * A moment, ISO 8601 with its offset (`2027-01-10T18:00:00Z`, `2027-01-10T10:00:00-08:00`),
 * stored as a `timestamptz` and shown in UTC with milliseconds (`2027-01-10T18:00:00.000Z`).
 */
export const dateTime = (example: string) => ({
  schema: Schema.String.annotate({ message: mustBe("a date-time with its offset (2027-01-10T18:00:00Z)"), format: "date-time" }).pipe(
    Schema.check(Schema.makeFilter(validDateTime, {
      message: mustBe("a date-time with its offset (2027-01-10T18:00:00Z)")
    })),
    Schema.decodeTo(Schema.String, SchemaTransformation.transform({ decode: (s) => new Date(s).toISOString(), encode: (s) => s }))
  ),
  expected: "a date-time with its offset (2027-01-10T18:00:00Z)",
  column: "timestamp" as Column,
  example,
  bounds: {}
})

/** A whole number from `min` to `max`. */
export const integer = (min: number, max: number, example: number) => ({
  schema: Schema.Number.annotate({ message: mustBe("an integer") }).check(
    Schema.isInt({ message: mustBe("an integer") }),
    Schema.isGreaterThanOrEqualTo(min, { message: `The {field} field must be at least ${min}.` }),
    Schema.isLessThanOrEqualTo(max, { message: `The {field} field must not be greater than ${max}.` })
  ),
  expected: "an integer",
  column: "value",
  example,
  bounds: { min, max }
}) satisfies Kind<Schema.Top>

/** A whole number stored as `bigint` (an id, an amount in cents), exact up to 2^53 - 1. */
export const bigInteger = (min: number, example: number) => ({ ...integer(min, Number.MAX_SAFE_INTEGER, example), column: "int8" as Column })

/** The largest amount of cents a response can carry exactly: 2^53 - 1, what every JSON parser holds (I-JSON). */
export const MAX_CENTS = Number.MAX_SAFE_INTEGER

const DOLLARS = /^(0|[1-9][0-9]*)(\.[0-9]{1,2})?$/

/** Cents of a dollar string, exactly (no floats); undefined unless it is digits with at most two decimals. */
export const parseDollars = (s: string): bigint | undefined => {
  const m = DOLLARS.exec(s)
  if (m === null) return undefined
  const cents = (m[2] ?? ".").slice(1).padEnd(2, "0")
  return BigInt(m[1]!) * 100n + BigInt(cents)
}

/** Cents as dollars with two decimals: 1250 -> "12.50". */
export const formatCents = (cents: number | bigint): string => {
  const c = BigInt(cents)
  const sign = c < 0n ? "-" : ""
  const abs = c < 0n ? -c : c
  return `${sign}${abs / 100n}.${String(abs % 100n).padStart(2, "0")}`
}

/** What an amount of money is sent as (a JSON number is refused with this). */
const DOLLARS_TYPE = 'a string in dollars such as "12.50"'
const DOLLARS_RULE = 'an amount in dollars such as "12.50" (digits, at most two decimal places; no $, sign or thousands separator)'

/** A rule on the cents of a dollar string; a string that is no amount breaks only the DOLLARS_RULE. */
const centsAt = (rule: (cents: bigint) => boolean, message: string) =>
  Schema.makeFilter((s: string) => {
    const cents = parseDollars(s)
    return cents === undefined || rule(cents)
  }, { message })

/**
 * The dollar strings the OpenAPI document states: digits with at most two decimals and at most
 * 14 before the point (MAX_CENTS in dollars has 14), and for an amount greater than zero, not
 * all zeros. The exact ceiling is in the field's description.
 */
const DOLLARS_STATED = "^(0|[1-9][0-9]{0,13})(\\.[0-9]{1,2})?$"
const POSITIVE_DOLLARS_STATED = "^([1-9][0-9]{0,13}(\\.[0-9]{1,2})?|0\\.(0[1-9]|[1-9][0-9]?))$"

/**
 * Money sent by a client: a dollar string (`"12.50"`), never cents and never a JSON number,
 * parsed exactly into integer cents (docs/api.md "Money"). At most MAX_CENTS cents; `min` in
 * cents, 0 (zero allowed) or 1 (greater than zero), the two the document can state as a pattern.
 */
export const dollars = (min: 0 | 1, example: string) => {
  const ceiling = formatCents(MAX_CENTS)
  const tooBig = `The {field} field must not be greater than ${ceiling}.`
  const tooSmall = min > 0 ? `The {field} field must be greater than ${formatCents(min - 1)}.` : `The {field} field must be at least ${formatCents(min)}.`
  const pattern = min > 0 ? POSITIVE_DOLLARS_STATED : DOLLARS_STATED
  const description = `Dollars as a string (\`${example}\`), never cents: digits with at most two decimal places, ` +
    `${min > 0 ? "greater than 0" : "0 or more"}, at most ${ceiling} (2^53 - 1 cents).`
  return {
    schema: Schema.String.annotate({ message: mustBe(DOLLARS_TYPE), examples: [example] }).pipe(
      Schema.check(
        Schema.makeFilter((s: string) => DOLLARS.test(s), { message: mustBe(DOLLARS_RULE), description, toJsonSchema: () => ({ pattern }) })
      ),
      Schema.check(centsAt((cents) => cents <= BigInt(MAX_CENTS), tooBig)),
      Schema.check(centsAt((cents) => cents >= BigInt(min), tooSmall)),
      Schema.decodeTo(Schema.Number, SchemaTransformation.transform({ decode: (s) => Number(parseDollars(s)!), encode: (n) => formatCents(n) }))
    ),
    expected: DOLLARS_TYPE,
    column: "int8" as Column,
    example,
    bounds: {}
  }
}
/** A number that need not be whole (a ratio such as a click-through rate). */
export const decimal = (example: number) => ({
  schema: Schema.Finite.annotate({ message: mustBe("a number") }),
  expected: "a number",
  column: "value",
  example,
  bounds: {}
}) satisfies Kind<Schema.Top>

export const boolean = (example: boolean) => ({
  schema: Schema.Boolean.annotate({ message: mustBe("true or false") }),
  expected: "true or false",
  column: "value",
  example,
  bounds: {}
}) satisfies Kind<Schema.Top>

/** One of a fixed set of strings; `thing` names one in messages, else the field does (an item of a list: "event kind"). */
export const oneOf = <const L extends ReadonlyArray<string>>(values: L, example: L[number], thing = "{field}") => {
  const invalid = `The selected ${thing} is invalid (expected one of: ${values.join(", ")}).`
  return {
    schema: Schema.Literals(values).annotate({ message: invalid }),
    expected: `one of: ${values.join(", ")}`,
    column: "value",
    example,
    bounds: { values }
  } satisfies Kind<Schema.Top>
}

/** One of `values` shown; only `writable` ones may be sent. */
export const stateOf = <const L extends ReadonlyArray<string>, const W extends ReadonlyArray<L[number]>>(values: L, writable: W, example: L[number]) => ({
  ...oneOf(values, example),
  write: oneOf(writable, writable[0]!).schema
})

/** At most `maxItems` items, each checked by `item`; stored as `jsonb`. */
export const list = <S extends Schema.Top>(item: Kind<S>, maxItems: number, example: ReadonlyArray<S["Type"]>) => ({
  schema: Schema.Array(item.schema).annotate({ message: mustBe("an array") }).check(
    Schema.makeFilter((xs: ReadonlyArray<unknown>) => xs.length <= maxItems, {
      message: `The {field} field must not have more than ${maxItems} items.`,
      toJsonSchema: () => ({ maxItems })
    })
  ),
  expected: "an array",
  column: "json" as Column,
  example,
  bounds: { ...item.bounds, maxItems }
})

/** The tenant-defined custom fields of a member or contact: only API-visible ones are shown. */
export const customFields = (resource: "member" | "contact", example: Readonly<Record<string, unknown>>) => ({
  schema: Schema.Record(Schema.String, Schema.Unknown).annotate({
    description: "The chamber's own fields that it shows through the API, by key; each value is any JSON value. Empty when none are shown."
  }),
  expected: "an object",
  column: { customFields: resource } as Column,
  example,
  bounds: {}
})

/**
 * How a field takes part in writes:
 * - `required`: never null; required on create, optional on update;
 * - `nullable`: may be null; optional, null when omitted on create;
 * - `defaulted`: never null; optional, and on create an omitted or null value takes the default;
 *   on update a null leaves it as it is;
 * - `readOnly`: shown, never written through the API, never null;
 * - `readOnlyNullable`: shown, never written through the API, may be null (an invoice's number while draft);
 * - `writeOnly`: written like a nullable field and stored, never shown (an event's description).
 */
export type Presence = "required" | "nullable" | "defaulted" | "readOnly" | "readOnlyNullable" | "writeOnly"

export interface Field<S extends Schema.Top = Schema.Top, P extends Presence = Presence> {
  readonly kind: Kind<S>
  readonly presence: P
  readonly default?: S["Type"] | undefined
}

export const required = <S extends Schema.Top>(kind: Kind<S>): Field<S, "required"> => ({ kind, presence: "required" })
export const nullable = <S extends Schema.Top>(kind: Kind<S>): Field<S, "nullable"> => ({ kind, presence: "nullable" })
export const defaulted = <S extends Schema.Top>(kind: Kind<S>, value: S["Type"]): Field<S, "defaulted"> => ({
  kind,
  presence: "defaulted",
  default: value
})
export const readOnly = <S extends Schema.Top>(kind: Kind<S>): Field<S, "readOnly"> => ({ kind, presence: "readOnly" })
export const readOnlyNullable = <S extends Schema.Top>(kind: Kind<S>): Field<S, "readOnlyNullable"> => ({
  kind,
  presence: "readOnlyNullable"
})
export const writeOnly = <S extends Schema.Top>(kind: Kind<S>): Field<S, "writeOnly"> => ({ kind, presence: "writeOnly" })
