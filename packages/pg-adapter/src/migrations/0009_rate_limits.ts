/**
 * The in-process rate-limit store's saved windows (docs/operations.md "Rate limits"): one row per
 * API key counted in the last day, its per-minute buckets, so a restart goes on counting and
 * `chamber key usage` reads them. Unused with Redis, which keeps the counts itself.
 */
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE rate_limit_windows (
      key text PRIMARY KEY,
      buckets jsonb NOT NULL,
      latest_ms bigint NOT NULL
    )`
})
