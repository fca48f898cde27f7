/**
 * A page of members (docs/api.md "Lists, paging, sorting") read from what migration 0011 keeps
 * beside them: the list, whole or by status, counts from `member_counts` (`countedPage`); a
 * search by name alone finds its matches in `member_names`, one narrow row a member, through
 * the trigram index when there is one, counts them and orders them there, and reads only the
 * page's members. `lower(name) LIKE lower(pattern)` is how ILIKE compares, so the matches are
 * those of `name ILIKE pattern`, and `name_key, id` is the order `lower(name) COLLATE "C", id`.
 */
import * as Effect from "effect/Effect"
import type * as SqlClient from "effect/sql/SqlClient"
import type * as Statement from "effect/sql/Statement"
import { type Member, MemberResource, type MemberSort, type MemberStatus, type Page, PER_PAGE, pageOffset } from "@chamber/core"
import { likeEscape } from "./rows.ts"
import { countedPage, type Order, orderBy, orderSql } from "./PageSql.ts"
import { envelopeColumns } from "./ResourceSql.ts"

/** The members order on the members table, `m`. */
export const memberOrder = orderBy<MemberSort["column"]>("m", { name: `lower(m.name) COLLATE "C"`, created_at: "m.created_at" }, "name")
/** The same order on `member_names`, `s` (its `member_id` is the member's id). */
const namesOrder = (sort: MemberSort | undefined): Order =>
  orderBy<MemberSort["column"]>("s", { name: "s.name_key", created_at: "s.created_at" }, "name")(sort).map((key) =>
    key.expression === "s.id" ? { ...key, expression: "s.member_id" } : key
  )

const MEMBER = envelopeColumns(MemberResource, "m")
const COLUMNS = MEMBER.select
/** A member read after one leading column, the total. */
const toMember = MEMBER.at(1)

/** The chamber's members, all of them or of one status, by the kept counts. */
export const countedMembers = (
  sql: SqlClient.SqlClient,
  tenantId: number,
  status: MemberStatus | undefined,
  sort: MemberSort | undefined,
  page: number
): Effect.Effect<Page<Member>> => {
  const where: Statement.Fragment = status === undefined
    ? sql`m.tenant_id = ${tenantId}`
    : sql`m.tenant_id = ${tenantId} AND m.status = ${status}`
  const count = status === undefined
    ? sql`(SELECT coalesce(sum(c.members), 0)::int8 FROM member_counts c WHERE c.tenant_id = ${tenantId})`
    : sql`(SELECT coalesce(sum(c.members), 0)::int8 FROM member_counts c WHERE c.tenant_id = ${tenantId} AND c.status = ${status})`
  return countedPage<Member>(sql, {
    columns: MEMBER,
    from: "members m",
    alias: "m",
    where,
    order: memberOrder(sort),
    page,
    count
  })
}

/**
 * Members whose name contains `text`, case-insensitively: their ids found in `member_names`
 * (through the trigram index), counted and ordered there, one page of them taken, and only those
 * members read. Only a page past the end needs a second statement, the count.
 */
export const membersNamed = (
  sql: SqlClient.SqlClient,
  tenantId: number,
  text: string,
  sort: MemberSort | undefined,
  page: number
): Effect.Effect<Page<Member>> =>
  Effect.gen(function*() {
    const matching = sql`s.tenant_id = ${tenantId} AND s.name_key LIKE lower(${"%" + likeEscape(text) + "%"})`
    const rows = yield* sql`
      SELECT listed.total_count, ${sql.literal(COLUMNS)}
      FROM (SELECT s.member_id, count(*) OVER () AS total_count FROM member_names s WHERE ${matching}
            ORDER BY ${sql.literal(orderSql(namesOrder(sort)))} LIMIT ${PER_PAGE} OFFSET ${pageOffset(page)}) listed
      JOIN members m ON m.id = listed.member_id AND m.tenant_id = ${tenantId}
      ORDER BY ${sql.literal(orderSql(memberOrder(sort)))}`.values
    if (rows.length > 0) return { rows: rows.map(toMember), total: Number(rows[0]![0]) }
    const counted = yield* sql<{ readonly n: bigint }>`SELECT count(*) AS n FROM member_names s WHERE ${matching}`
    return { rows: [], total: Number(counted[0]!.n) }
  }).pipe(Effect.orDie)
