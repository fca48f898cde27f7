/**
 * Indexes for the relay's claim (webhook-relay DeliveryStore.ts): per subscription, its waiting
 * deliveries in the order they fall due, and its leased ones. A claim then reads a few rows per
 * subscription with waiting deliveries, however many wait in all. They replace the index of all
 * waiting deliveries by due time, which nothing reads any more and which, next to these, let the
 * planner pick the wrong one when its statistics still said that few deliveries wait.
 * (Numbered 10: main's 0009 is the rate-limit store's.)
 */
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX webhook_deliveries_hook_due ON webhook_deliveries (hook_id, next_attempt_at, id) WHERE status = 'pending'`
  yield* sql`CREATE INDEX webhook_deliveries_hook_leased ON webhook_deliveries (hook_id, lease_expires_at) WHERE status = 'pending' AND lease_expires_at IS NOT NULL`
  yield* sql`DROP INDEX webhook_deliveries_due`
})
