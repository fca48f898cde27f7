/** Events in SQL, every statement scoped by tenant; a page is one statement (`listPage`). */
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { EventRepo, EventResource, type EventSort } from "@chamber/core"
import { columnValues, listPage, orderBy, type ResourceRow, selectList, toEnvelope, toStored } from "./ResourceSql.ts"

type EventRow = ResourceRow<typeof EventResource.fields>

const COLUMNS = selectList(EventResource, "e")
const STORED_COLUMNS = selectList(EventResource, "e", { stored: true })
const toEvent = toEnvelope(EventResource)
const storedOf = toStored(EventResource)
/** Newest-starting first by default. */
const orderOf = (sort: EventSort | undefined) =>
  orderBy<EventSort["column"]>("e", { starts_at: "e.starts_at", created_at: "e.created_at" }, "starts_at")(sort ?? { column: "starts_at", descending: true })

export const EventRepoSql = Layer.effect(EventRepo, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const find = (tenantId: number, id: number) =>
    sql<EventRow>`SELECT ${sql.literal(COLUMNS)} FROM events e WHERE e.tenant_id = ${tenantId} AND e.id = ${id}`.pipe(
      Effect.map((rows) => (rows[0] === undefined ? undefined : toEvent(rows[0]))),
      Effect.orDie
    )
  const found = (tenantId: number) => (rows: ReadonlyArray<{ readonly id: bigint | number }>) =>
    find(tenantId, Number(rows[0]!.id)).pipe(Effect.map((e) => e!))

  return EventRepo.of({
    list: (tenantId, sort, page) =>
      listPage(sql, { select: COLUMNS, from: "events e", where: sql`e.tenant_id = ${tenantId}`, orderBy: orderOf(sort), page, map: toEvent }),
    find,
    findForUpdate: (tenantId, id) =>
      sql<EventRow>`SELECT ${sql.literal(STORED_COLUMNS)} FROM events e WHERE e.tenant_id = ${tenantId} AND e.id = ${id} FOR UPDATE`.pipe(
        Effect.map((rows) => (rows[0] === undefined ? undefined : storedOf(rows[0]))),
        Effect.orDie
      ),
    insert: (tenantId, values) =>
      sql<{ readonly id: bigint }>`INSERT INTO events ${sql.insert({ tenant_id: tenantId, ...columnValues(EventResource, values) })} RETURNING id`.pipe(
        Effect.orDie,
        Effect.flatMap(found(tenantId))
      ),
    update: (tenantId, id, changes) =>
      sql<{ readonly id: bigint }>`UPDATE events SET ${sql.update({ ...columnValues(EventResource, changes), updated_at: new Date() })}
          WHERE tenant_id = ${tenantId} AND id = ${id} RETURNING id`.pipe(Effect.orDie, Effect.flatMap(found(tenantId)))
  })
}))
