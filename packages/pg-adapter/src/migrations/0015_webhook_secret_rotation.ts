/**
 * A subscription's previous signing secret while a rotation's overlap lasts (ruling 31): sealed
 * like the secret itself, signing beside it until `previous_expires_at`. And when a delivery was
 * last queued again by a replay or a recovery, so that its `updated_at` moves with it.
 */
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE webhook_subscriptions ADD COLUMN previous_secret text, ADD COLUMN previous_expires_at timestamptz`
  yield* sql`ALTER TABLE webhook_deliveries ADD COLUMN queued_at timestamptz`
})
