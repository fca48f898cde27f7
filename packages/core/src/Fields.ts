/**
 * Field schemas with the messages integrators see in a 422 (spec 7, ruling 7). Every
 * message names the field the way the API spells it.
 */
import { Schema } from "effect"

const label = (field: string) => field.replace(/_/g, " ")

export const required = (field: string) => ({ messageMissingKey: `The ${label(field)} field is required.` })

/** Any string PostgreSQL can store: U+0000 is refused here (a 422), not by the database (a 500). */
export const string = (field: string) =>
  Schema.String.annotate({ message: `The ${label(field)} field must be a string.` }).check(
    Schema.makeFilter((s: string) => !s.includes("\u0000"), {
      message: `The ${label(field)} field must not contain NUL characters.`
    })
  )

/** A string of at most `max` characters. */
export const text = (field: string, max: number) =>
  string(field).check(
    Schema.isMaxLength(max, { message: `The ${label(field)} field must not be greater than ${max} characters.` })
  )

/** A required string must not be blank (empty or only white space). */
export const filled = (field: string) =>
  Schema.makeFilter((s: string) => s.trim() !== "", { message: `The ${label(field)} field is required.` })

/** Optional and nullable; the null case keeps the string's message. */
export const nullable = <S extends Schema.Top>(schema: S, field: string, kind: string) =>
  Schema.NullOr(schema).annotate({ message: `The ${label(field)} field must be ${kind}.` })

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/
export const email = (field: string, max = 255) =>
  text(field, max).check(
    Schema.makeFilter((s: string) => EMAIL.test(s), { message: `The ${label(field)} field must be a valid email address.` })
  )

export const integer = (field: string, min: number, max?: number) => {
  const base = Schema.Number.annotate({ message: `The ${label(field)} field must be an integer.` }).check(
    Schema.isInt({ message: `The ${label(field)} field must be an integer.` }),
    Schema.isGreaterThanOrEqualTo(min, { message: `The ${label(field)} field must be at least ${min}.` })
  )
  return max === undefined
    ? base
    : base.check(Schema.isLessThanOrEqualTo(max, { message: `The ${label(field)} field must not be greater than ${max}.` }))
}

export const boolean = (field: string) =>
  Schema.Boolean.annotate({ message: `The ${label(field)} field must be true or false.` })

const validDate = (s: string) => {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s)
  if (m === null) return false
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])))
  return d.getUTCFullYear() === Number(m[1]) && d.getUTCMonth() === Number(m[2]) - 1 && d.getUTCDate() === Number(m[3])
}
/** A calendar date, `YYYY-MM-DD`. */
export const date = (field: string) =>
  Schema.String.annotate({ message: `The ${label(field)} field must be a valid date (YYYY-MM-DD).` }).check(
    Schema.makeFilter(validDate, { message: `The ${label(field)} field must be a valid date (YYYY-MM-DD).` })
  )

export const oneOf = <const L extends ReadonlyArray<string>>(field: string, values: L) =>
  Schema.Literals(values).annotate({
    message: `The selected ${label(field)} is invalid (expected one of: ${values.join(", ")}).`
  })

/** An array whose items are each checked by `item`. */
export const arrayOf = <S extends Schema.Top>(item: S, field: string) =>
  Schema.Array(item).annotate({ message: `The ${label(field)} field must be an array.` })

