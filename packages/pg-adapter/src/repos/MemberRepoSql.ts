/**
 * Members in SQL. A page is one statement: the rows, their API-visible custom fields and the
 * filtered total (a window count); only a page past the end needs a second count.
 */
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { type Member, type MemberFilter, MemberRepo, type MemberSort, type MemberValues, PER_PAGE, pageOffset, SlugTaken } from "@chamber/core"
import { likeEscape, num, numOrNull } from "./rows.ts"

const COLUMNS = `m.id, m.name, m.slug, m.status, m.industry, m.secondary_industries, m.slogan, m.about, m.website,
  m.email, m.phone, m.address_line1, m.address_line2, m.city, m.state, m.zip, m.member_since::text AS member_since,
  m.employee_count, m.directory_visible,
  to_char(m.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at,
  to_char(m.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS updated_at,
  (SELECT coalesce(jsonb_object_agg(e.key, e.value), '{}'::jsonb)
     FROM jsonb_each(m.custom_fields) e
     JOIN custom_field_definitions d
       ON d.tenant_id = m.tenant_id AND d.resource = 'member' AND d.api_visible AND d.key = e.key) AS visible_custom_fields`

export const toMember = (r: any): Member => ({
  id: num(r.id),
  attributes: {
    name: r.name,
    slug: r.slug,
    status: r.status,
    industry: r.industry,
    secondary_industries: r.secondary_industries,
    slogan: r.slogan,
    about: r.about,
    website: r.website,
    email: r.email,
    phone: r.phone,
    address_line1: r.address_line1,
    address_line2: r.address_line2,
    city: r.city,
    state: r.state,
    zip: r.zip,
    member_since: r.member_since,
    employee_count: numOrNull(r.employee_count),
    directory_visible: r.directory_visible,
    custom_fields: r.visible_custom_fields
  },
  created_at: r.created_at,
  updated_at: r.updated_at
})

const ORDER: Record<string, string> = {
  name: `lower(m.name) COLLATE "C" ASC, m.id ASC`,
  "-name": `lower(m.name) COLLATE "C" DESC, m.id DESC`,
  created_at: `m.created_at ASC, m.id ASC`,
  "-created_at": `m.created_at DESC, m.id DESC`
}

const orderKey = (sort: MemberSort | undefined) => (sort === undefined ? "name" : `${sort.descending ? "-" : ""}${sort.column}`)

/** JSON-encodes the jsonb columns for a write. */
const encode = (values: Partial<MemberValues>): Record<string, unknown> => {
  const out: Record<string, unknown> = { ...values }
  if ("secondary_industries" in values) {
    out.secondary_industries = values.secondary_industries === null ? null : JSON.stringify(values.secondary_industries)
  }
  if ("custom_fields" in values) out.custom_fields = JSON.stringify(values.custom_fields ?? {})
  return out
}

const isUniqueViolation = (e: unknown) => (e as { reason?: { _tag?: string } })?.reason?._tag === "UniqueViolation"

export const MemberRepoSql = Layer.effect(MemberRepo, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const where = (tenantId: number, filter: MemberFilter) => {
    const clauses = [sql`m.tenant_id = ${tenantId}`]
    if (filter.status !== undefined) clauses.push(sql`m.status = ${filter.status}`)
    if (filter.email !== undefined) clauses.push(sql`lower(m.email) = lower(${filter.email})`)
    if (filter.name !== undefined) clauses.push(sql`m.name ILIKE ${"%" + likeEscape(filter.name) + "%"}`)
    return sql.and(clauses)
  }

  const find = (tenantId: number, id: number) =>
    sql`SELECT ${sql.literal(COLUMNS)} FROM members m WHERE m.tenant_id = ${tenantId} AND m.id = ${id}`.pipe(
      Effect.map((rows) => (rows[0] === undefined ? undefined : toMember(rows[0]))),
      Effect.orDie
    )

  const writeFailed = (values: Partial<MemberValues>) => (e: unknown) =>
    isUniqueViolation(e) ? Effect.fail(new SlugTaken({ slug: String(values.slug) })) : Effect.die(e)

  return MemberRepo.of({
    list: Effect.fn("MemberRepo.list")(function*(tenantId, filter, sort, page) {
      const cond = where(tenantId, filter)
      const rows = yield* sql`
        SELECT ${sql.literal(COLUMNS)}, count(*) OVER () AS total_count
        FROM members m WHERE ${cond}
        ORDER BY ${sql.literal(ORDER[orderKey(sort)]!)}
        LIMIT ${PER_PAGE} OFFSET ${pageOffset(page)}`.pipe(Effect.orDie)
      if (rows.length > 0) return { rows: rows.map(toMember), total: num((rows[0] as any).total_count) }
      const counted = yield* sql`SELECT count(*) AS n FROM members m WHERE ${cond}`.pipe(Effect.orDie)
      return { rows: [], total: num((counted[0] as any).n) }
    }),
    find,
    findValues: (tenantId, id) =>
      sql`SELECT m.*, m.member_since::text AS member_since FROM members m WHERE m.tenant_id = ${tenantId} AND m.id = ${id} FOR UPDATE`.pipe(
        Effect.map((rows) => {
          const r: any = rows[0]
          if (r === undefined) return undefined
          const { id: _id, tenant_id: _t, created_at: _c, updated_at: _u, ...values } = r
          return { ...values, employee_count: numOrNull(r.employee_count) } as MemberValues
        }),
        Effect.orDie
      ),
    insert: (tenantId, values) =>
      sql`INSERT INTO members ${sql.insert({ tenant_id: tenantId, ...encode(values) })} RETURNING id`.pipe(
        Effect.catch(writeFailed(values)),
        Effect.flatMap((rows) => find(tenantId, num((rows[0] as any).id))),
        Effect.map((m) => m!)
      ),
    update: (tenantId, id, changes) =>
      sql`UPDATE members SET ${sql.update({ ...encode(changes), updated_at: new Date() })}
          WHERE tenant_id = ${tenantId} AND id = ${id}`.pipe(
        Effect.catch(writeFailed(changes)),
        Effect.flatMap(() => find(tenantId, id)),
        Effect.map((m) => m!)
      ),
    slugsLike: (tenantId, base) =>
      sql`SELECT slug FROM members WHERE tenant_id = ${tenantId} AND (slug = ${base} OR slug LIKE ${likeEscape(base) + "-%"})`.pipe(
        Effect.map((rows) => new Set(rows.map((r: any) => r.slug as string))),
        Effect.orDie
      )
  })
}))
