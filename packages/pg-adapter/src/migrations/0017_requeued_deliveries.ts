/**
 * Ordered delivery without probes where nothing was queued again (ruling 32, docs/webhooks.md
 * "Order"). Writers hold every delivery behind the first pending one of its subscription and
 * resource (migration 0016), so only a replay or a recovery (which set `queued_at`) can leave a
 * subscription with two deliveries of one resource free to go. The relay's claim checks a
 * delivery's order against the others of its resource only for subscriptions with such a delivery
 * pending, found in this index, which holds the few deliveries queued again and still waiting.
 *
 * Deliveries queued again before this migration by the admin's replay (which did not set
 * `queued_at`) are found as they are now: free to go beside another free one of their
 * subscription and resource. They get `queued_at = created_at`, which marks them without moving
 * their `updated_at`.
 */
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    UPDATE webhook_deliveries d SET queued_at = d.created_at
    WHERE d.status = 'pending' AND NOT d.held AND d.queued_at IS NULL AND EXISTS (
      SELECT 1 FROM webhook_deliveries o
      WHERE o.hook_id = d.hook_id AND o.resource = d.resource AND o.status = 'pending' AND NOT o.held AND o.id <> d.id
    )`
  yield* sql`CREATE INDEX webhook_deliveries_requeued ON webhook_deliveries (hook_id) WHERE status = 'pending' AND queued_at IS NOT NULL`
})
