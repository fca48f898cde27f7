/**
 * Contacts in SQL, every statement scoped by tenant (`resourceTable`). A
 * subscribe holds a transaction-level advisory lock on (tenant, address), which holds on the
 * embedded database too (docs/architecture.md "What embedded connections share").
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import { ContactRepo, ContactResource, type ContactSort } from "@chamber/core"
import { orderBy } from "./PageSql.ts"
import { resourceTable } from "./ResourceSql.ts"
import { andShownRow, ImportSlices } from "./HeldRows.ts"

const orderOf = orderBy<ContactSort["column"]>("c", { last_name: `lower(c.last_name) COLLATE "C"`, created_at: "c.created_at" }, "last_name")

/** The advisory-lock namespace of subscribes (the second key is the address's hash). */
const SUBSCRIBE_LOCK = 5_102_026

export const ContactRepoSql = Layer.effect(ContactRepo, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const sliced = yield* ImportSlices

  const contacts = resourceTable(sql, ContactResource, "contacts", "c", sliced)

  return ContactRepo.of({
    // A repository call is no span of its own: the service call above it is one, its statement another.
    list: (tenantId, filter, sort, page, updatedSince) => {
      const clauses = [sql`c.tenant_id = ${tenantId}`]
      if (filter.email !== undefined) clauses.push(sql`lower(c.email) = lower(${filter.email})`)
      return contacts.page(sql.and(clauses), orderOf(sort), page, updatedSince)
    },
    find: contacts.find,
    findForUpdate: contacts.findForUpdate,
    insert: (tenantId, values, subscribed, memberId) =>
      contacts.insert(tenantId, values, { subscribed_at: subscribed ? new Date() : null, member_id: memberId ?? null }),
    update: contacts.update,
    lockEmail: (tenantId, email) =>
      Effect.gen(function*() {
        yield* sql`SELECT pg_advisory_xact_lock(${SUBSCRIBE_LOCK}, hashtext(${`${tenantId}:${email.toLowerCase()}`}))`
        const rows = yield* sql<{ readonly id: bigint; readonly subscribed: boolean }>`
          SELECT id, subscribed_at IS NOT NULL AS subscribed FROM contacts
          WHERE tenant_id = ${tenantId} AND lower(email) = lower(${email})${sql.literal(andShownRow(sliced, "contacts"))} ORDER BY id LIMIT 1`
        return rows[0] === undefined ? undefined : { id: Number(rows[0].id), subscribed: rows[0].subscribed }
      }).pipe(Effect.orDie),
    setSubscribed: (tenantId, id, subscribed) =>
      sql<{ readonly id: bigint }>`UPDATE contacts SET subscribed_at = ${subscribed ? new Date() : null}
          WHERE tenant_id = ${tenantId} AND id = ${id} RETURNING id`.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie)
  })
}))
