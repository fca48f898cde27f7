/** Fixed-size paging shared by every list (docs/api.md "Lists, paging, sorting"). */
import * as Schema from "effect/Schema"

export const PER_PAGE = 100

/** The page asked: a whole number of at least 1 of any size (a page past the last is empty, not refused). */
const PageNumber = Schema.Finite.check(Schema.makeFilter((n: number) => Number.isInteger(n) && n >= 1, {
  expected: "a whole number of at least 1",
  toJsonSchema: () => ({ type: "integer", minimum: 1 })
}))

export const PageMeta = Schema.Struct({
  current_page: PageNumber,
  per_page: Schema.Int,
  total: Schema.Int,
  last_page: Schema.Int
})
export type PageMeta = typeof PageMeta.Type

export const pageMeta = (page: number, total: number): PageMeta => ({
  current_page: page,
  per_page: PER_PAGE,
  total,
  last_page: Math.max(1, Math.ceil(total / PER_PAGE))
})

export const pageOffset = (page: number): number => (page - 1) * PER_PAGE

/**
 * A page no list reaches: its first row would come after more rows than any table holds, and its
 * offset is still an exact number within SQL's bigint.
 */
export const PAST_EVERY_ROW = Math.floor(Number.MAX_SAFE_INTEGER / PER_PAGE)

/**
 * The page a list reads for the page asked, a whole number of any size: itself, or for a page
 * beyond `PAST_EVERY_ROW`, that page, which answers the same (no rows, the true total).
 */
export const readablePage = (asked: bigint): number => (asked > BigInt(PAST_EVERY_ROW) ? PAST_EVERY_ROW : Number(asked))

export interface Page<A> {
  readonly rows: ReadonlyArray<A>
  readonly total: number
}

/** The wire shape of a list: `{data, meta}`. */
export const ListOf = <S extends Schema.Top>(item: S) => Schema.Struct({ data: Schema.Array(item), meta: PageMeta })

/**
 * What every list takes: `sort`, `page`, and `updated_since` (ruling 30), a moment as an ISO
 * date-time: only rows whose `updated_at` is at or after it.
 */
export interface ListQuery {
  readonly sort?: string | undefined
  readonly page?: number | undefined
  readonly updated_since?: string | undefined
}
