/** Members in SQL, every statement scoped by tenant (`resourceTable`); writes answer a taken slug; lists read MemberListSql.ts. */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import { MemberRepo, MemberResource, SlugTaken, UPDATED_AT } from "@chamber/core"
import { likeEscape } from "./rows.ts"
import { columnValues, resourceTable } from "./ResourceSql.ts"
import { countedMembers, memberOrder, membersNamed } from "./MemberListSql.ts"
import { memberSearchCache } from "./MemberSearchCache.ts"
import { ImportSlices } from "./HeldRows.ts"

export const MemberRepoSql = Layer.effect(MemberRepo, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const sliced = yield* ImportSlices

  const members = resourceTable(sql, MemberResource, "members", "m", sliced)
  const searches = memberSearchCache()
  const find = members.find

  /** The written row, or SlugTaken when the slug is another member's (ON CONFLICT keeps the transaction usable). */
  const written = (slug: string | null | undefined) => (rows: ReadonlyArray<ReadonlyArray<unknown>>) =>
    rows[0] === undefined ? Effect.fail(new SlugTaken({ slug: String(slug) })) : Effect.succeed(members.toOne(rows[0]))

  return MemberRepo.of({
    // A repository call is no span of its own: the service call above it is one, its statements others.
    list: (tenantId, filter, sort, page, updatedSince) => {
      // The list, and a search by name alone, read what is kept beside the members (MemberListSql.ts);
      // what is kept does not know `updated_at`, so a list asked for it (`updated_since`, its sort) reads the members.
      if (filter.email === undefined && filter.name === undefined) return countedMembers(sql, sliced, tenantId, filter.status, sort, page, updatedSince)
      if (filter.email === undefined && filter.status === undefined && updatedSince === undefined && sort?.column !== UPDATED_AT) {
        return membersNamed(sql, sliced, searches, tenantId, filter.name!, sort, page)
      }
      const clauses = [sql`m.tenant_id = ${tenantId}`]
      if (filter.status !== undefined) clauses.push(sql`m.status = ${filter.status}`)
      if (filter.email !== undefined) clauses.push(sql`lower(m.email) = lower(${filter.email})`)
      if (filter.name !== undefined) clauses.push(sql`m.name ILIKE ${"%" + likeEscape(filter.name) + "%"}`)
      return members.page(sql.and(clauses), memberOrder(sort), page, updatedSince)
    },
    find,
    findForUpdate: members.findForUpdate,
    insert: (tenantId, values) =>
      sql`INSERT INTO members AS m ${sql.insert({ tenant_id: tenantId, ...columnValues(MemberResource, values) })}
          ON CONFLICT (tenant_id, slug) DO NOTHING RETURNING ${members.selected}`.values.pipe(
        Effect.orDie,
        Effect.flatMap(written(values.slug))
      ),
    update: (tenantId, id, changes) =>
      sql`UPDATE members AS m SET ${sql.update(columnValues(MemberResource, changes))}
          WHERE m.tenant_id = ${tenantId} AND m.id = ${id} RETURNING ${members.selected}`.values.pipe(
        Effect.catchReason("SqlError", "UniqueViolation", () => Effect.succeed([])),
        Effect.orDie,
        Effect.flatMap(written(changes.slug))
      ),
    slugsLike: (tenantId, base) =>
      sql<{ readonly slug: string }>`SELECT slug FROM members WHERE tenant_id = ${tenantId} AND (slug = ${base} OR slug LIKE ${likeEscape(base) + "-%"})`.pipe(
        Effect.map((rows) => new Set(rows.map((r) => r.slug))),
        Effect.orDie
      )
  })
}))
