/**
 * Fair delivery and relays known to be alive (docs/webhooks.md "Delivery", webhook-relay
 * DeliveryStore.ts).
 *
 * - `webhook_origin(url)`: the receiver a subscription's URL names, one per chamber and server:
 *   its host and port, in lower case, without user info or the default port 443. Subscriptions
 *   of one chamber to the same server share it, whatever their paths.
 * - `webhook_receivers`: the receivers of a chamber whose last attempts timed out, and how many
 *   in a row. A receiver at the relay's limit of timeouts gets one send at a time until one
 *   succeeds, which deletes its row. Keyed by chamber and receiver, not by subscription, so
 *   deleting a subscription, deactivating it or posting its URL again does not reset it.
 * - `webhook_relays`: the relays running on PostgreSQL, each holding a session advisory lock
 *   (namespace 5102028, the second key the row's id) on a connection of its own while it runs.
 *   A relay whose lock is free has died or lost the database: its leases count as expired.
 */
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE FUNCTION webhook_origin(url text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN regexp_replace(lower(substring(url FROM '^[A-Za-z][A-Za-z0-9+.-]*://(?:[^@/?#]*@)?([^/?#]+)')), ':443$', '')`
  yield* sql`
    CREATE TABLE webhook_receivers (
      tenant_id bigint NOT NULL REFERENCES tenants(id),
      origin text NOT NULL,
      timeouts integer NOT NULL,
      last_timeout_at timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, origin)
    )`
  yield* sql`
    CREATE TABLE webhook_relays (
      id serial PRIMARY KEY,
      relay_id text NOT NULL UNIQUE,
      started_at timestamptz NOT NULL DEFAULT now()
    )`
})
