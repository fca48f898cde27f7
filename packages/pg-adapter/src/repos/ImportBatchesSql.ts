/**
 * An import's set-wise writes in SQL (core ImportBatches): the rows of a batch sent as one JSON
 * array, spread into the table's row type by `jsonb_populate_recordset` and inserted by one
 * statement, which answers each row as the resource's reads do (`envelopeColumns`), in the
 * order given. Any refusal of the database is the batch's (`ImportBatchRefused`).
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import { ContactResource, type Fields, ImportBatches, ImportBatchRefused, MemberResource, type Resource } from "@chamber/core"
import { envelopeColumns } from "./ResourceSql.ts"

const IDENTIFIER = /^[a-z][a-z0-9_]*$/

export const ImportBatchesSql = Layer.effect(ImportBatches, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  /**
   * `rows` (each a resource's stored values, plus `internal` columns that are no field of it)
   * inserted into `table`; every row of a batch names the same columns (core's `defaults` gives
   * every field). JSON-kind fields are sent as JSON values, not text.
   */
  const insertMany = <D extends Fields>(resource: Resource<string, D>, table: string) => {
    const columns = envelopeColumns(resource, "t")
    const toOne = columns.at(0)
    return (tenantId: number, rows: ReadonlyArray<Readonly<Record<string, unknown>>>) => {
      if (rows.length === 0) return Effect.succeed([])
      const names = Object.keys(rows[0]!).filter((key) => rows[0]![key] !== undefined)
      const bad = names.find((name) => !IDENTIFIER.test(name))
      if (bad !== undefined) return Effect.die(new Error(`${table} column ${JSON.stringify(bad)} is not a plain identifier`))
      const list = names.join(", ")
      const picked = names.map((name) => `r.${name}`).join(", ")
      return sql`
        INSERT INTO ${sql.literal(table)} AS t (tenant_id, ${sql.literal(list)})
        SELECT ${tenantId}, ${sql.literal(picked)}
        FROM jsonb_populate_recordset(NULL::${sql.literal(table)}, ${JSON.stringify(rows)}::jsonb) WITH ORDINALITY AS r
        ORDER BY r.ordinality
        RETURNING ${sql.literal(columns.select)}`.values.pipe(
        Effect.map((values) => values.map(toOne).sort((a, b) => a.id - b.id)),
        Effect.catchTag("SqlError", (error) => Effect.fail(new ImportBatchRefused({ reason: error.message })))
      )
    }
  }

  const members = insertMany(MemberResource, "members")
  const contacts = insertMany(ContactResource, "contacts")

  return ImportBatches.of({
    memberSlugs: (tenantId) =>
      sql<{ readonly slug: string }>`SELECT slug FROM members WHERE tenant_id = ${tenantId} AND slug IS NOT NULL`.pipe(
        Effect.map((rows) => new Set(rows.map((r) => r.slug))),
        Effect.orDie
      ),
    insertMembers: (tenantId, rows) => members(tenantId, rows),
    insertContacts: (tenantId, rows) =>
      Effect.gen(function*() {
        // As Contacts.create: the member a contact works for is one of the tenant's.
        const named = [...new Set(rows.flatMap((row) => (row.member_id === null ? [] : [row.member_id])))]
        if (named.length > 0) {
          const [own] = yield* sql<{ readonly n: number }>`
            SELECT count(*)::int AS n FROM members WHERE tenant_id = ${tenantId} AND id = ANY(${`{${named.join(",")}}`}::int8[])`.pipe(Effect.orDie)
          if (own!.n !== named.length) return yield* new ImportBatchRefused({ reason: "a contact names a member of no such id" })
        }
        return yield* contacts(tenantId, rows.map((row) => ({ ...row.values, subscribed_at: null, member_id: row.member_id })))
      })
  })
}))
