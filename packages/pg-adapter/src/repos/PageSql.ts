/**
 * A page of a list (docs/api.md "Lists, paging, sorting"): 100 rows in an order that ends with
 * the id, and the exact total of the filtered rows.
 *
 * The wide select list (custom fields, formatted times) is computed only for the page's rows:
 * the rows a page skips are read as ids, in a subquery, and the page's ids joined back. A list
 * whose total is cheap (a kept count: `countedPage`) knows it before reading and reads a page in
 * the back half from the other end, so a page near the end costs what page 1 costs; any other
 * list (`listPage`) counts its filtered rows by a window over those ids.
 */
import * as Effect from "effect/Effect"
import type * as SqlClient from "effect/sql/SqlClient"
import type * as Statement from "effect/sql/Statement"
import { type Page, PER_PAGE, pageOffset, type SortOrder, UPDATED_AT } from "@chamber/core"

/** One key of an order: an SQL expression, its direction, and nulls last in either direction or not. */
export interface OrderKey {
  readonly expression: string
  readonly descending: boolean
  readonly nullsLast: boolean
}

/** An order whose last key is the id, so that it is total. */
export type Order = ReadonlyArray<OrderKey>

/**
 * The ORDER BY of an order, or of its exact reverse (the same rows, last first): every key's
 * direction flips, and so does where its nulls go.
 */
export const orderSql = (order: Order, reversed = false) =>
  order.map(({ descending, expression, nullsLast }) => {
    const desc = descending !== reversed
    const nulls = nullsLast ? (reversed ? " NULLS FIRST" : " NULLS LAST") : ""
    return `${expression} ${desc ? "DESC" : "ASC"}${nulls}`
  }).join(", ")

/**
 * The order of a sort: each column's expression, the default when none is asked, and always the
 * id last, so pages never overlap or skip rows. The columns in `nullsLast` put their nulls last
 * in either direction.
 */
export const orderBy = <C extends string>(
  alias: string,
  columns: Record<Exclude<C, typeof UPDATED_AT>, string>,
  fallback: C,
  nullsLast: ReadonlyArray<C> = []
) => {
  const expressions: Record<string, string> = { ...columns, [UPDATED_AT]: `${alias}.${UPDATED_AT}` }
  return ({ column, descending }: SortOrder<C> = { column: fallback, descending: false }): Order => [
    { expression: expressions[column]!, descending, nullsLast: nullsLast.includes(column) },
    { expression: `${alias}.id`, descending, nullsLast: false }
  ]
}

/** The order of `sort=updated_at` / `-updated_at` on a list that has no other sort columns. */
export const updatedAtOrder = (alias: string, sort: SortOrder<typeof UPDATED_AT>): Order => orderBy<typeof UPDATED_AT>(alias, {}, UPDATED_AT)(sort)

/**
 * A select list and how to read its values out of a statement's rows read as arrays
 * (`statement.values`), wherever in the row the list starts (ResourceSql.ts `envelopeColumns`).
 */
export interface Columns<A> {
  /** The select list (`selectList`). */
  readonly select: string
  /** The mapping of a row whose select list starts at `offset`. */
  readonly at: (offset: number) => (values: ReadonlyArray<unknown>) => A
}

export interface PageQuery<A> {
  /** What a row of the page is, read by position. */
  readonly columns: Columns<A>
  /** The table (or view) and its alias: `members m`. */
  readonly from: string
  readonly alias: string
  readonly where: Statement.Fragment
  readonly order: Order
  readonly page: number
  /** `updated_since` (ruling 30): only rows whose `updated_at` is at or after this ISO date-time. */
  readonly updatedSince?: string | undefined
}

/** The rows a list reads: its filter and, when asked, `updated_at` at or after `updated_since`. */
const filtered = <A>(sql: SqlClient.SqlClient, query: PageQuery<A>): Statement.Fragment =>
  query.updatedSince === undefined
    ? query.where
    : sql.and([query.where, sql`${sql.literal(query.alias)}.updated_at >= ${query.updatedSince}::timestamptz`])

/**
 * A page in one statement: the page's ids and the filtered total (a window count over the
 * ids), then their rows. Only a page past the end needs a second statement, the count.
 */
export const listPage = <A>(sql: SqlClient.SqlClient, query: PageQuery<A>): Effect.Effect<Page<A>> =>
  Effect.gen(function*() {
    const { alias, from } = query
    const where = filtered(sql, query)
    const order = orderSql(query.order)
    const rows = yield* sql`
      SELECT listed.total_count, ${sql.literal(query.columns.select)}
      FROM ${sql.literal(from)}
      JOIN (SELECT ${sql.literal(alias)}.id, count(*) OVER () AS total_count FROM ${sql.literal(from)} WHERE ${where}
            ORDER BY ${sql.literal(order)} LIMIT ${PER_PAGE} OFFSET ${pageOffset(query.page)}) listed ON listed.id = ${sql.literal(alias)}.id
      ORDER BY ${sql.literal(order)}`.values
    if (rows.length > 0) return { rows: rows.map(query.columns.at(1)), total: Number(rows[0]![0]) }
    const counted = yield* sql<{ readonly n: bigint }>`SELECT count(*) AS n FROM ${sql.literal(from)} WHERE ${where}`
    return { rows: [], total: Number(counted[0]!.n) }
  }).pipe(Effect.orDie)

/** How many times a page is read again when a write changed the total between its two statements. */
const REREADS = 3

/**
 * A page of a list whose exact total is a cheap scalar (`count`, an SQL expression: a sum of
 * kept counts). Page 1 is one statement, the total beside the rows. A later page reads the total
 * first: past the end it answers no rows; otherwise it reads the page from whichever end is
 * nearer, skipping at most half the rows. The page's statement carries the total again: when a
 * write committed in between changed it, the page is read again with the new one, so rows and
 * total are always of one moment. A list asked for `updated_since` counts what it reads (`listPage`):
 * the kept count is of every row.
 */
export const countedPage = <A>(
  sql: SqlClient.SqlClient,
  query: PageQuery<A> & { readonly count: Statement.Fragment }
): Effect.Effect<Page<A>> =>
  query.updatedSince !== undefined
    ? listPage(sql, query)
    : query.page === 1
    ? firstPage(sql, query)
    : laterPage(sql, query)

/** Page 1 of a counted list: one statement, the total beside the rows. */
const firstPage = <A>(sql: SqlClient.SqlClient, query: PageQuery<A> & { readonly count: Statement.Fragment }): Effect.Effect<Page<A>> => {
  const map = query.columns.at(1)
  return sql`
        SELECT ${query.count} AS total_count, ${sql.literal(query.columns.select)}
        FROM ${sql.literal(query.from)} WHERE ${query.where}
        ORDER BY ${sql.literal(orderSql(query.order))} LIMIT ${PER_PAGE}`.values.pipe(
    Effect.map((rows) => ({ rows: rows.map(map), total: rows.length === 0 ? 0 : Number(rows[0]![0]) })),
    Effect.orDie
  )
}

/** A later page of a counted list: the total first, then the page from the nearer end (`countedPage`). */
const laterPage = <A>(sql: SqlClient.SqlClient, query: PageQuery<A> & { readonly count: Statement.Fragment }): Effect.Effect<Page<A>> =>
  Effect.gen(function*() {
    const { alias, count, from, where } = query
    const forward = orderSql(query.order)
    const map = query.columns.at(1)
    const offset = pageOffset(query.page)
    const totalNow = sql<{ readonly total_count: bigint | string }>`SELECT ${count} AS total_count`.pipe(
      Effect.map((rows) => Number(rows[0]!.total_count))
    )
    let total = yield* totalNow
    for (let read = 1; ; read++) {
      if (offset >= total) return { rows: [], total }
      const after = total - offset - PER_PAGE
      const reversed = after < offset
      const rows = yield* sql`
        SELECT ${count} AS total_count, ${sql.literal(query.columns.select)}
        FROM ${sql.literal(from)}
        JOIN (SELECT ${sql.literal(alias)}.id FROM ${sql.literal(from)} WHERE ${where}
              ORDER BY ${sql.literal(orderSql(query.order, reversed))}
              LIMIT ${reversed ? Math.min(PER_PAGE, total - offset) : PER_PAGE} OFFSET ${reversed ? Math.max(0, after) : offset}) listed
          ON listed.id = ${sql.literal(alias)}.id
        ORDER BY ${sql.literal(forward)}`.values
      const seen = rows.length === 0 ? yield* totalNow : Number(rows[0]![0])
      if ((seen === total && rows.length > 0) || read === REREADS) return { rows: rows.map(map), total: seen }
      total = seen
    }
  }).pipe(Effect.orDie)
