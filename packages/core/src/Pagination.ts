/** Fixed-size paging shared by every list (docs/api.md "Lists, paging, sorting"). */
import * as Schema from "effect/Schema"

export const PER_PAGE = 100

export const PageMeta = Schema.Struct({
  current_page: Schema.Int,
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

export interface Page<A> {
  readonly rows: ReadonlyArray<A>
  readonly total: number
}

/** The wire shape of a list: `{data, meta}`. */
export const ListOf = <S extends Schema.Top>(item: S) => Schema.Struct({ data: Schema.Array(item), meta: PageMeta })
