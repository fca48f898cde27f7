/**
 * Contacts in SQL, every statement scoped by tenant; a page is one statement (`listPage`). A
 * subscribe holds a transaction-level advisory lock on (tenant, address), which holds on the
 * embedded database too (docs/architecture.md "What embedded connections share").
 */
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { ContactRepo, ContactResource, type ContactSort } from "@chamber/core"
import { columnValues, listPage, orderBy, type ResourceRow, selectList, toEnvelope, toStored } from "./ResourceSql.ts"

type ContactRow = ResourceRow<typeof ContactResource.fields>

const COLUMNS = selectList(ContactResource, "c")
const STORED_COLUMNS = selectList(ContactResource, "c", { stored: true })
const toContact = toEnvelope(ContactResource)
const storedOf = toStored(ContactResource)

const orderOf = orderBy<ContactSort["column"]>("c", { last_name: `lower(c.last_name) COLLATE "C"`, created_at: "c.created_at" }, "last_name")

/** The advisory-lock namespace of subscribes (the second key is the address's hash). */
const SUBSCRIBE_LOCK = 5_102_026

export const ContactRepoSql = Layer.effect(ContactRepo, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const find = (tenantId: number, id: number) =>
    sql<ContactRow>`SELECT ${sql.literal(COLUMNS)} FROM contacts c WHERE c.tenant_id = ${tenantId} AND c.id = ${id}`.pipe(
      Effect.map((rows) => (rows[0] === undefined ? undefined : toContact(rows[0]))),
      Effect.orDie
    )

  const found = (tenantId: number) => (rows: ReadonlyArray<{ readonly id: bigint | number }>) =>
    find(tenantId, Number(rows[0]!.id)).pipe(Effect.map((c) => c!))

  return ContactRepo.of({
    list: Effect.fn("ContactRepo.list")(function*(tenantId, filter, sort, page) {
      const clauses = [sql`c.tenant_id = ${tenantId}`]
      if (filter.email !== undefined) clauses.push(sql`lower(c.email) = lower(${filter.email})`)
      return yield* listPage(sql, { select: COLUMNS, from: "contacts c", where: sql.and(clauses), orderBy: orderOf(sort), page, map: toContact })
    }),
    find,
    findForUpdate: (tenantId, id) =>
      sql<ContactRow>`SELECT ${sql.literal(STORED_COLUMNS)} FROM contacts c WHERE c.tenant_id = ${tenantId} AND c.id = ${id} FOR UPDATE`.pipe(
        Effect.map((rows) => (rows[0] === undefined ? undefined : storedOf(rows[0]))),
        Effect.orDie
      ),
    insert: (tenantId, values, subscribed) =>
      sql<{ readonly id: bigint }>`INSERT INTO contacts ${
        sql.insert({ tenant_id: tenantId, ...columnValues(ContactResource, values), subscribed_at: subscribed ? new Date() : null })
      } RETURNING id`.pipe(Effect.orDie, Effect.flatMap(found(tenantId))),
    update: (tenantId, id, changes) =>
      sql<{ readonly id: bigint }>`UPDATE contacts SET ${sql.update({ ...columnValues(ContactResource, changes), updated_at: new Date() })}
          WHERE tenant_id = ${tenantId} AND id = ${id} RETURNING id`.pipe(Effect.orDie, Effect.flatMap(found(tenantId))),
    lockEmail: (tenantId, email) =>
      Effect.gen(function*() {
        yield* sql`SELECT pg_advisory_xact_lock(${SUBSCRIBE_LOCK}, hashtext(${`${tenantId}:${email.toLowerCase()}`}))`
        const rows = yield* sql<{ readonly id: bigint; readonly subscribed: boolean }>`
          SELECT id, subscribed_at IS NOT NULL AS subscribed FROM contacts
          WHERE tenant_id = ${tenantId} AND lower(email) = lower(${email}) ORDER BY id LIMIT 1`
        return rows[0] === undefined ? undefined : { id: Number(rows[0].id), subscribed: rows[0].subscribed }
      }).pipe(Effect.orDie),
    setSubscribed: (tenantId, id, subscribed) =>
      sql<{ readonly id: bigint }>`UPDATE contacts SET subscribed_at = ${subscribed ? new Date() : null}, updated_at = now()
          WHERE tenant_id = ${tenantId} AND id = ${id} RETURNING id`.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie)
  })
}))
