/**
 * A chamber's rows removed from every table that holds them (docs/operations.md "Offboarding a
 * chamber"). The tables come from the database's catalogue, not a list kept by hand, so a table
 * added later is emptied too; the order is the catalogue's foreign keys (a table before those it
 * references) plus the dependencies only triggers know (`TRIGGER_ORDER`). Each batch is its own
 * transaction (`deletionBatch`): other chambers' requests wait for no long lock.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { TenantRemovalRepo } from "@chamber/core"
import type { Int8 } from "./rows.ts"

/** The count a `SELECT count(*) AS n` answered. */
const counted = (rows: ReadonlyArray<{ readonly n: Int8 }>) => Number(rows[0]!.n)

/**
 * One batch of a removal (a chamber's, an import's discard), a transaction of its own: the rows
 * its statement deleted. The rows are found through an index by a plain index scan, which marks
 * the entries of rows earlier batches deleted and steps over them (a bitmap scan would read them
 * all again at every batch, with their heap pages, until a vacuum: PGlite never vacuums, and
 * autovacuum lags a burst). The deletes' foreign key checks keep their plans for the batch,
 * PostgreSQL's default, where the embedded database's `force_custom_plan` (embedded/Pglite.ts)
 * would plan each deleted row's check anew: each is an index probe on the referencing column.
 */
export const deletionBatch = (sql: SqlClient.SqlClient, deleted: Effect.Effect<ReadonlyArray<{ readonly n: Int8 }>, SqlError>) =>
  sql.withTransaction(
    sql`SELECT set_config('enable_bitmapscan', 'off', true), set_config('plan_cache_mode', 'auto', true)`.pipe(
      Effect.andThen(deleted),
      Effect.map(counted)
    )
  )

/**
 * Up to `limit` rows of `table` whose `column` is `value` deleted as one batch (`deletionBatch`):
 * how many went. Rows are picked by their physical address: every table has one, whatever its key.
 */
export const deleteSome = (sql: SqlClient.SqlClient, table: string, column: string, value: number, limit: number) =>
  deletionBatch(sql, sql<{ readonly n: Int8 }>`
    WITH gone AS (
      DELETE FROM ${sql(table)} WHERE ctid = ANY(ARRAY(SELECT ctid FROM ${sql(table)} WHERE ${sql(column)} = ${value} LIMIT ${limit}))
      RETURNING 1
    )
    SELECT count(*) AS n FROM gone`)

/**
 * [first, then]: `first` must be emptied before `then` for a reason no foreign key states.
 * Removing members writes the chamber's `member_counts` and `member_names` (migration 0011), and
 * removing a custom field definition marks the members or contacts holding its value changed
 * (migration 0014), so fields go after them, when there is nothing left to mark.
 */
export const TRIGGER_ORDER: ReadonlyArray<readonly [string, string]> = [
  ["members", "member_counts"],
  ["members", "member_names"],
  ["members", "custom_field_definitions"],
  ["contacts", "custom_field_definitions"]
]

/** The rate-limit windows of a chamber's keys are keyed `<public id>:<key id>` (core rateLimitKey). */
const windowsPrefix = (publicId: string) => `${publicId}:`

/**
 * `tables` ordered so each comes before every table it must precede (`edges`: [first, then]);
 * ties by name. Dies on a cycle: no order would let every batch succeed.
 */
export const removalOrder = (tables: ReadonlyArray<string>, edges: ReadonlyArray<readonly [string, string]>): ReadonlyArray<string> => {
  const known = new Set(tables)
  const after = new Map(tables.map((t) => [t, new Set<string>()]))
  const waiting = new Map(tables.map((t) => [t, 0]))
  for (const [first, then] of edges) {
    if (first === then || !known.has(first) || !known.has(then) || after.get(first)!.has(then)) continue
    after.get(first)!.add(then)
    waiting.set(then, waiting.get(then)! + 1)
  }
  const ready = tables.filter((t) => waiting.get(t) === 0).sort()
  const order: Array<string> = []
  while (ready.length > 0) {
    const next = ready.shift()!
    order.push(next)
    for (const then of after.get(next)!) {
      waiting.set(then, waiting.get(then)! - 1)
      if (waiting.get(then) === 0) {
        ready.push(then)
        ready.sort()
      }
    }
  }
  if (order.length !== tables.length) {
    throw new Error(`The tables ${tables.filter((t) => !order.includes(t)).join(", ")} reference each other: no removal order empties them.`)
  }
  return order
}

/** The schema's tables that have `column`, from the catalogue. */
export const tablesWith = (sql: SqlClient.SqlClient, column: string) =>
  sql<{ readonly name: string }>`
    SELECT c.relname AS name FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = ${column} AND NOT a.attisdropped
    WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')`.pipe(Effect.map((rows) => rows.map((r) => r.name)))

/** The schema's foreign keys, from the catalogue: the referencing table, the referenced one, and whether a delete cascades. */
export const foreignKeys = (sql: SqlClient.SqlClient) =>
  sql<{ readonly referencing: string; readonly referenced: string; readonly cascades: boolean }>`
    SELECT r.relname AS referencing, p.relname AS referenced, k.confdeltype = 'c' AS cascades
    FROM pg_constraint k
    JOIN pg_class r ON r.oid = k.conrelid
    JOIN pg_class p ON p.oid = k.confrelid
    JOIN pg_namespace n ON n.oid = r.relnamespace
    WHERE k.contype = 'f' AND n.nspname = current_schema()`

export const TenantRemovalSql = Layer.effect(TenantRemovalRepo, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const tables = Effect.gen(function*() {
    const holding = yield* tablesWith(sql, "tenant_id")
    const references = yield* foreignKeys(sql)
    const held = new Set([...holding, "tenants"])
    // Fail closed: rows that reference a chamber's rows but cannot be found by its id would stop
    // the removal half-way; refuse before anything is removed.
    const unreachable = references.filter((r) => held.has(r.referenced) && !held.has(r.referencing) && !r.cascades)
    if (unreachable.length > 0) {
      return yield* Effect.die(new Error(
        `Cannot remove a chamber: ${unreachable.map((r) => `${r.referencing} references ${r.referenced}`).join(", ")} without a tenant_id column.`
      ))
    }
    const edges = references.filter((r) => held.has(r.referencing)).map((r) => [r.referencing, r.referenced] as const)
    return removalOrder(holding, [...edges, ...TRIGGER_ORDER])
  }).pipe(Effect.orDie, Effect.withSpan("TenantRemovalRepo.tables"))

  return TenantRemovalRepo.of({
    begin: (tenantId) =>
      sql<{ readonly deleting_at: Date; readonly keys: Int8; readonly hooks: Int8 }>`
        WITH marked AS (
          UPDATE tenants SET deleting_at = coalesce(deleting_at, now()) WHERE id = ${tenantId} RETURNING deleting_at
        ), revoked AS (
          UPDATE api_keys SET revoked_at = now() WHERE tenant_id = ${tenantId} AND revoked_at IS NULL RETURNING 1
        ), stopped AS (
          UPDATE webhook_subscriptions SET active = false WHERE tenant_id = ${tenantId} AND active RETURNING 1
        )
        SELECT (SELECT deleting_at FROM marked) AS deleting_at,
               (SELECT count(*) FROM revoked) AS keys, (SELECT count(*) FROM stopped) AS hooks`.pipe(
        Effect.map(([r]) => ({ deleting_at: r!.deleting_at.toISOString(), keys_revoked: Number(r!.keys), subscriptions_stopped: Number(r!.hooks) })),
        Effect.orDie
      ),
    tables,
    count: (table, tenantId) =>
      sql<{ readonly n: Int8 }>`SELECT count(*) AS n FROM ${sql(table)} WHERE tenant_id = ${tenantId}`.pipe(Effect.map(counted), Effect.orDie),
    removeBatch: (table, tenantId, limit) => deleteSome(sql, table, "tenant_id", tenantId, limit).pipe(Effect.orDie),
    countRateLimitWindows: (publicId) =>
      sql<{ readonly n: Int8 }>`SELECT count(*) AS n FROM rate_limit_windows WHERE starts_with(key, ${windowsPrefix(publicId)})`.pipe(
        Effect.map(counted),
        Effect.orDie
      ),
    removeRateLimitWindows: (publicId) =>
      sql<{ readonly n: Int8 }>`
        WITH gone AS (DELETE FROM rate_limit_windows WHERE starts_with(key, ${windowsPrefix(publicId)}) RETURNING 1)
        SELECT count(*) AS n FROM gone`.pipe(Effect.map(counted), Effect.orDie),
    removeTenant: (tenantId) =>
      sql`DELETE FROM tenants WHERE id = ${tenantId} AND deleting_at IS NOT NULL RETURNING 1`.pipe(
        Effect.map((rows) => rows.length === 1),
        Effect.orDie
      )
  })
}))
