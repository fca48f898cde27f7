/** Path and query parameters shared by every group (docs/api.md "Lists, paging, sorting"). */
import * as Schema from "effect/Schema"
import * as SchemaTransformation from "effect/SchemaTransformation"

const ID = /^[1-9][0-9]{0,15}$/

/**
 * A path id. Text that is not a positive integer names no row, so it decodes to 0,
 * an id no row has: the lookup answers 404 like any missing row, never a 422.
 */
export const RowId = Schema.String.pipe(
  Schema.decodeTo(
    Schema.Int,
    SchemaTransformation.transform({ decode: (s) => (ID.test(s) ? Number(s) : 0), encode: (n) => String(n) })
  )
)

const PAGE = "The page field must be an integer of at least 1."

/** `page`: plain decimal digits, at least 1, default 1. */
export const PageQuery = Schema.optionalKey(
  Schema.String.annotate({ message: PAGE }).pipe(
    Schema.check(Schema.makeFilter((s: string) => /^[1-9][0-9]*$/.test(s) && Number.isSafeInteger(Number(s)), { message: PAGE })),
    Schema.decodeTo(Schema.Int, SchemaTransformation.transform({ decode: Number, encode: String }))
  )
)

/** `sort`: a column, `-` for descending; anything else, a repeated `sort` included, means the default order. */
export const SortQuery = Schema.optionalKey(
  Schema.Union([Schema.String, Schema.Array(Schema.String)]).pipe(
    Schema.decodeTo(Schema.String, SchemaTransformation.transform({ decode: (v) => (typeof v === "string" ? v : ""), encode: (s) => s }))
  )
)
