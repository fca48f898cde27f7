/** Path and query parameters shared by every group (docs/api.md "Lists, paging, sorting"). */
import * as Schema from "effect/Schema"
import * as SchemaTransformation from "effect/SchemaTransformation"
import { Field } from "@chamber/core"

const DIGITS = /^[1-9][0-9]*$/

/**
 * A path id. Ids are compared as whole numbers of any size: text that is not a positive integer,
 * or one past the ids a row can have (every id is a safe integer), names no row, so it decodes
 * to 0, an id no row has: the lookup answers 404 like any missing row, never a 422, and no
 * number out of SQL's range reaches the database.
 */
export const RowId = Schema.String.pipe(
  Schema.decodeTo(
    Schema.Int,
    SchemaTransformation.transform({
      decode: (s) => (s.length <= 16 && DIGITS.test(s) && Number.isSafeInteger(Number(s)) ? Number(s) : 0),
      encode: (n) => String(n)
    })
  )
)

const PAGE = "The page field must be an integer of at least 1."

/** `page`: plain decimal digits, a whole number of at least 1 of any size, default 1. */
export const PageQuery = Schema.optionalKey(
  Schema.String.annotate({ message: PAGE }).pipe(
    Schema.check(Schema.makeFilter((s: string) => DIGITS.test(s), { message: PAGE })),
    Schema.decodeTo(Schema.BigInt, SchemaTransformation.transform({ decode: (s) => BigInt(s), encode: String }))
  )
)

/** `sort`: a column, `-` for descending; anything else, a repeated `sort` included, means the default order. */
export const SortQuery = Schema.optionalKey(
  Schema.Union([Schema.String, Schema.Array(Schema.String)]).pipe(
    Schema.decodeTo(Schema.String, SchemaTransformation.transform({ decode: (v) => (typeof v === "string" ? v : ""), encode: (s) => s }))
  )
)

/**
 * `updated_since` (ruling 30): an RFC 3339 date-time with its offset, years 0001 to 9999; only
 * rows whose `updated_at` is at or after it. Anything else is a 422 naming the parameter.
 */
export const UpdatedSinceQuery = Schema.optionalKey(Field.dateTime("2026-03-01T00:00:00Z").schema)

/** The query parameters every list takes beside its own filters. */
export const ListParams = { updated_since: UpdatedSinceQuery, sort: SortQuery, page: PageQuery }
