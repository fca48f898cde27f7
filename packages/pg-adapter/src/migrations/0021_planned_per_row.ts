/**
 * The triggers a write fires read their table as it is when they run, whatever its statistics
 * say (docs/webhooks.md "Delivery"). PL/pgSQL keeps a generic plan of each statement for the
 * session, made after a few runs and kept until the table's statistics change: one made while
 * `webhook_deliveries` or `outbox_events` was small, or when an `ANALYZE` had found it empty,
 * reads the whole table for each row, through a burst that grows it faster than autovacuum
 * analyzes it (a new database's first import, a first burst after the retention emptied it).
 * These triggers' statements are therefore planned at each run, for the table's current size:
 *
 * - `webhook_deliveries_next` (migrations 0016, 0018), which lets the next delivery of a
 *   subscription and resource go when the relay settles one that was followed;
 * - `outbox_events_position` (migration 0013), which numbers each event of a transaction as it
 *   commits.
 *
 * A replacement of either function must set it again.
 */
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER FUNCTION webhook_deliveries_next() SET plan_cache_mode = force_custom_plan`
  yield* sql`ALTER FUNCTION outbox_events_position() SET plan_cache_mode = force_custom_plan`
})
