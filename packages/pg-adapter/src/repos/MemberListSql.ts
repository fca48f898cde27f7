/**
 * A page of members (docs/api.md "Lists, paging, sorting") read from what migration 0011 keeps
 * beside them: the list, whole or by status, counts from `member_counts` (`countedPage`); a
 * search by name alone finds its matches in `member_names`, one narrow row a member, through
 * the trigram index when there is one, counts them and orders them there, keeps them while the
 * chamber's members stay as they were (`MemberSearchCache`), and reads only the page's members. `lower(name) LIKE lower(pattern)` is how ILIKE compares, so the matches are
 * those of `name ILIKE pattern`, and `name_key, id` is the order `lower(name) COLLATE "C", id`.
 */
import * as Effect from "effect/Effect"
import type * as SqlClient from "effect/sql/SqlClient"
import type * as Statement from "effect/sql/Statement"
import { type Member, MemberResource, type MemberSort, type MemberStatus, type Page, PER_PAGE, pageOffset } from "@chamber/core"
import { likeEscape } from "./rows.ts"
import { countedPage, type Order, orderBy, orderSql } from "./PageSql.ts"
import { MANY, MAX_IDS, type MemberSearchCache, SEEN } from "./MemberSearchCache.ts"
import { envelopeColumns } from "./ResourceSql.ts"
import { andShownRow } from "./HeldRows.ts"

/** The members order on the members table, `m`. */
export const memberOrder = orderBy<MemberSort["column"]>("m", { name: `lower(m.name) COLLATE "C"`, created_at: "m.created_at" }, "name")
/** The same order on `member_names`, `s` (its `member_id` is the member's id). */
const namesOrder = (sort: MemberSort | undefined): Order =>
  orderBy<MemberSort["column"]>("s", { name: "s.name_key", created_at: "s.created_at" }, "name")(sort).map((key) =>
    key.expression === "s.id" ? { ...key, expression: "s.member_id" } : key
  )

/** A member's columns where imports are sliced (custom fields of definitions no import holds) and where not. */
const MEMBERS = { sliced: envelopeColumns(MemberResource, "m", true), whole: envelopeColumns(MemberResource, "m") }

/** ` AND` the shown test of `alias` (HeldRows.ts), where rows can be held. */
const shown = (sql: SqlClient.SqlClient, sliced: boolean, alias: string) => sql.literal(andShownRow(sliced, alias))
const columnsOf = (sliced: boolean) => (sliced ? MEMBERS.sliced : MEMBERS.whole)
/** A member read after one leading column (a total, a version). */
const toMember = MEMBERS.whole.at(1)

/** The chamber's members, all of them or of one status, by the kept counts. */
export const countedMembers = (
  sql: SqlClient.SqlClient,
  sliced: boolean,
  tenantId: number,
  status: MemberStatus | undefined,
  sort: MemberSort | undefined,
  page: number,
  updatedSince?: string
): Effect.Effect<Page<Member>> => {
  const where: Statement.Fragment = status === undefined
    ? sql`m.tenant_id = ${tenantId}${shown(sql, sliced, "m")}`
    : sql`m.tenant_id = ${tenantId} AND m.status = ${status}${shown(sql, sliced, "m")}`
  const count = status === undefined
    ? sql`(SELECT coalesce(sum(c.members), 0)::int8 FROM member_counts c WHERE c.tenant_id = ${tenantId}${shown(sql, sliced, "c")})`
    : sql`(SELECT coalesce(sum(c.members), 0)::int8 FROM member_counts c WHERE c.tenant_id = ${tenantId} AND c.status = ${status}${shown(sql, sliced, "c")})`
  return countedPage<Member>(sql, {
    columns: columnsOf(sliced),
    from: "members m",
    alias: "m",
    where,
    order: memberOrder(sort),
    page,
    updatedSince,
    count
  })
}

/** Reads of a search again when a write moved the chamber's version between two of its statements. */
const REREADS = 3

/**
 * The chamber's members version, as text; none inside a transaction that has written (what it
 * sees is not yet anyone else's, and may yet be rolled back), so nothing read there is kept.
 */
const versionOf = (sql: SqlClient.SqlClient, sliced: boolean, tenantId: number) =>
  sql`CASE WHEN pg_current_xact_id_if_assigned() IS NULL
    THEN (SELECT coalesce(sum(c.changes), 0) FROM member_counts c WHERE c.tenant_id = ${tenantId}${shown(sql, sliced, "c")})::text END`

/**
 * Members whose name contains `text`, case-insensitively. The first read of a search reads its
 * matches (`matchesPage`) and marks it seen. The next finds every match in `member_names`
 * (through the trigram index), counts them and keeps their ids in order with the version
 * (`MemberSearchCache`); from then on a page is its slice of ids, read by id with the version beside,
 * and used only when the version has not moved. A search of more matches than are kept, or one
 * inside a writing transaction, reads its matches every time.
 */
export const membersNamed = (
  sql: SqlClient.SqlClient,
  sliced: boolean,
  searches: MemberSearchCache,
  tenantId: number,
  text: string,
  sort: MemberSort | undefined,
  page: number
): Effect.Effect<Page<Member>> =>
  Effect.gen(function*() {
    const matching = sql`s.tenant_id = ${tenantId} AND s.name_key LIKE lower(${"%" + likeEscape(text) + "%"})${shown(sql, sliced, "s")}`
    const order = orderSql(namesOrder(sort))
    const key = `${tenantId}\u0000${order}\u0000${text}`
    const offset = pageOffset(page)
    const entry = searches.get(key)
    if (entry === undefined) searches.set(key, SEEN)
    if (entry === undefined || entry === MANY) return yield* matchesPage(sql, sliced, tenantId, matching, sort, page)
    let kept = entry
    for (let read = 1; read <= REREADS; read++) {
      const fresh = kept === SEEN
      if (kept === SEEN) {
        const [row] = yield* sql<{ readonly version: string | null; readonly total_count: bigint | number; readonly ids: string | null }>`
          WITH matches AS MATERIALIZED (SELECT s.member_id, s.name_key, s.created_at FROM member_names s WHERE ${matching}),
          counted AS (SELECT count(*) AS total_count FROM matches)
          SELECT ${versionOf(sql, sliced, tenantId)} AS version, counted.total_count,
            (SELECT string_agg(s.member_id::text, ',' ORDER BY ${sql.literal(order)}) FROM matches s WHERE counted.total_count <= ${MAX_IDS}) AS ids
          FROM counted`
        if (Number(row!.total_count) > MAX_IDS) searches.set(key, MANY)
        if (row!.version === null || Number(row!.total_count) > MAX_IDS) break
        kept = { version: row!.version, ids: row!.ids === null ? [] : row!.ids.split(",").map(Number) }
        searches.set(key, kept)
      }
      const ids = kept.ids.slice(offset, offset + PER_PAGE)
      if (ids.length === 0) {
        if (fresh) return { rows: [], total: kept.ids.length }
        const [now] = yield* sql<{ readonly version: string | null }>`SELECT ${versionOf(sql, sliced, tenantId)} AS version`
        if (now!.version === kept.version) return { rows: [], total: kept.ids.length }
      } else {
        const rows = yield* sql`
          SELECT ${versionOf(sql, sliced, tenantId)} AS version, ${sql.literal(columnsOf(sliced).select)}
          FROM members m WHERE m.tenant_id = ${tenantId} AND m.id = ANY(${`{${ids.join(",")}}`}::int8[])
          ORDER BY ${sql.literal(orderSql(memberOrder(sort)))}`.values
        if (rows.length === ids.length && rows[0]![0] === kept.version) return { rows: rows.map(toMember), total: kept.ids.length }
      }
      kept = SEEN
      searches.set(key, SEEN)
    }
    return yield* matchesPage(sql, sliced, tenantId, matching, sort, page)
  }).pipe(Effect.orDie)

/**
 * A page of a name search read from its matches: their ids in order with their count (a window
 * over the narrow rows), then the page's members. Only a page past the end needs a second
 * statement, the count.
 */
const matchesPage = (sql: SqlClient.SqlClient, sliced: boolean, tenantId: number, matching: Statement.Fragment, sort: MemberSort | undefined, page: number) =>
  Effect.gen(function*() {
    const rows = yield* sql`
      SELECT listed.total_count, ${sql.literal(columnsOf(sliced).select)}
      FROM (SELECT s.member_id, count(*) OVER () AS total_count FROM member_names s WHERE ${matching}
            ORDER BY ${sql.literal(orderSql(namesOrder(sort)))} LIMIT ${PER_PAGE} OFFSET ${pageOffset(page)}) listed
      JOIN members m ON m.id = listed.member_id AND m.tenant_id = ${tenantId}
      ORDER BY ${sql.literal(orderSql(memberOrder(sort)))}`.values
    if (rows.length > 0) return { rows: rows.map(toMember), total: Number(rows[0]![0]) }
    const counted = yield* sql<{ readonly n: bigint }>`SELECT count(*) AS n FROM member_names s WHERE ${matching}`
    return { rows: [], total: Number(counted[0]!.n) }
  })
