/**
 * Members in SQL. A page is one statement: the rows, their API-visible custom fields and the
 * filtered total (a window count); only a page past the end needs a second count.
 */
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { MemberRepo, MemberResource, type MemberSort, PER_PAGE, pageOffset, SlugTaken } from "@chamber/core"
import { likeEscape } from "./rows.ts"
import { columnValues, type ResourceRow, selectList, toAttributes, toEnvelope } from "./ResourceSql.ts"

type MemberRow = ResourceRow<typeof MemberResource.fields>

const COLUMNS = selectList(MemberResource, "m")
const STORED_COLUMNS = selectList(MemberResource, "m", { stored: true })
const toMember = toEnvelope(MemberResource)
const toStored = toAttributes(MemberResource)

/** Each sort column; every order ends with the id, so pages never overlap. */
const ORDER: Record<MemberSort["column"], string> = { name: `lower(m.name) COLLATE "C"`, created_at: "m.created_at" }

const orderOf = ({ column, descending }: MemberSort = { column: "name", descending: false }) => {
  const direction = descending ? "DESC" : "ASC"
  return `${ORDER[column]} ${direction}, m.id ${direction}`
}

export const MemberRepoSql = Layer.effect(MemberRepo, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const find = (tenantId: number, id: number) =>
    sql<MemberRow>`SELECT ${sql.literal(COLUMNS)} FROM members m WHERE m.tenant_id = ${tenantId} AND m.id = ${id}`.pipe(
      Effect.map((rows) => (rows[0] === undefined ? undefined : toMember(rows[0]))),
      Effect.orDie
    )

  /** The written row, or SlugTaken when the slug is another member's (ON CONFLICT keeps the transaction usable). */
  const written = (tenantId: number, slug: string | null | undefined) => (rows: ReadonlyArray<{ readonly id: bigint | number }>) =>
    rows[0] === undefined
      ? Effect.fail(new SlugTaken({ slug: String(slug) }))
      : find(tenantId, Number(rows[0].id)).pipe(Effect.map((m) => m!))

  return MemberRepo.of({
    list: Effect.fn("MemberRepo.list")(function*(tenantId, filter, sort, page) {
      const clauses = [sql`m.tenant_id = ${tenantId}`]
      if (filter.status !== undefined) clauses.push(sql`m.status = ${filter.status}`)
      if (filter.email !== undefined) clauses.push(sql`lower(m.email) = lower(${filter.email})`)
      if (filter.name !== undefined) clauses.push(sql`m.name ILIKE ${"%" + likeEscape(filter.name) + "%"}`)
      const where = sql.and(clauses)
      const rows = yield* sql<MemberRow & { readonly total_count: bigint }>`
        SELECT ${sql.literal(COLUMNS)}, count(*) OVER () AS total_count
        FROM members m WHERE ${where}
        ORDER BY ${sql.literal(orderOf(sort))}
        LIMIT ${PER_PAGE} OFFSET ${pageOffset(page)}`.pipe(Effect.orDie)
      if (rows.length > 0) return { rows: rows.map(toMember), total: Number(rows[0]!.total_count) }
      const counted = yield* sql<{ readonly n: bigint }>`SELECT count(*) AS n FROM members m WHERE ${where}`.pipe(Effect.orDie)
      return { rows: [], total: Number(counted[0]!.n) }
    }),
    find,
    findForUpdate: (tenantId, id) =>
      sql<MemberRow>`SELECT ${sql.literal(STORED_COLUMNS)} FROM members m WHERE m.tenant_id = ${tenantId} AND m.id = ${id} FOR UPDATE`.pipe(
        Effect.map((rows) => (rows[0] === undefined ? undefined : toStored(rows[0]))),
        Effect.orDie
      ),
    insert: (tenantId, values) =>
      sql<{ readonly id: bigint }>`INSERT INTO members ${sql.insert({ tenant_id: tenantId, ...columnValues(MemberResource, values) })}
          ON CONFLICT (tenant_id, slug) DO NOTHING RETURNING id`.pipe(
        Effect.orDie,
        Effect.flatMap(written(tenantId, values.slug))
      ),
    update: (tenantId, id, changes) =>
      sql<{ readonly id: bigint }>`UPDATE members SET ${sql.update({ ...columnValues(MemberResource, changes), updated_at: new Date() })}
          WHERE tenant_id = ${tenantId} AND id = ${id} RETURNING id`.pipe(
        Effect.catchReason("SqlError", "UniqueViolation", () => Effect.succeed([])),
        Effect.orDie,
        Effect.flatMap(written(tenantId, changes.slug))
      ),
    slugsLike: (tenantId, base) =>
      sql<{ readonly slug: string }>`SELECT slug FROM members WHERE tenant_id = ${tenantId} AND (slug = ${base} OR slug LIKE ${likeEscape(base) + "-%"})`.pipe(
        Effect.map((rows) => new Set(rows.map((r) => r.slug))),
        Effect.orDie
      )
  })
}))
