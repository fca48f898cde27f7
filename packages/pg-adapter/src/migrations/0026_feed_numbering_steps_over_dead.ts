/**
 * The feed's numbering (`outbox_events_position`, migrations 0013, 0022, 0024) finds a
 * transaction's events as the chamber's events without a position, through the feed index
 * `(tenant_id, position)`. Numbering an event leaves behind, in that index, the entry of its
 * version without a position, until a vacuum removes it; PGlite never vacuums, and PostgreSQL's
 * autovacuum lags a burst. A bitmap scan visits every such entry and its heap page at every
 * commit, so a commit cost grew with the events the chamber had ever had (an import written in
 * slices, docs/architecture.md "On the embedded database: slices under a hold": each slice's
 * commit read every page of the feed before it). A plain index scan marks each entry whose row
 * is dead to everyone the first time it steps on it, and later scans pass over marked entries
 * without reading the heap: so the numbering plans no bitmap scan.
 *
 * A replacement of the function must set it again.
 */
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER FUNCTION outbox_events_position() SET enable_bitmapscan = off`
})
