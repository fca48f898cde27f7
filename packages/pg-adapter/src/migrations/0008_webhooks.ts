/**
 * Webhook subscriptions and their deliveries (docs/webhooks.md): every outbox event is fanned out,
 * in its own transaction, to one delivery per active subscription of its tenant listing its kind
 * (ruling 19); relays claim due deliveries from here with a lease and record every attempt.
 */
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE webhook_subscriptions (
      id bigserial PRIMARY KEY,
      tenant_id bigint NOT NULL REFERENCES tenants(id),
      url text NOT NULL,
      events jsonb NOT NULL,
      secret text NOT NULL,
      active boolean NOT NULL DEFAULT true,
      failure_count integer NOT NULL DEFAULT 0,
      last_failure_at timestamptz,
      last_success_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (tenant_id, url)
    )`
  yield* sql`
    CREATE TABLE webhook_deliveries (
      id bigserial PRIMARY KEY,
      tenant_id bigint NOT NULL REFERENCES tenants(id),
      event_id bigint NOT NULL REFERENCES outbox_events(id),
      hook_id bigint NOT NULL REFERENCES webhook_subscriptions(id) ON DELETE CASCADE,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
      attempt_count integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz NOT NULL DEFAULT now(),
      lease_expires_at timestamptz,
      leased_by text,
      created_at timestamptz NOT NULL DEFAULT now(),
      settled_at timestamptz
    )`
  yield* sql`CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at, id) WHERE status = 'pending'`
  yield* sql`CREATE INDEX webhook_deliveries_hook ON webhook_deliveries (tenant_id, hook_id, id)`
  yield* sql`CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id)`
  yield* sql`
    CREATE TABLE webhook_attempts (
      id bigserial PRIMARY KEY,
      tenant_id bigint NOT NULL REFERENCES tenants(id),
      delivery_id bigint NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
      attempted_at timestamptz NOT NULL,
      status integer,
      latency_ms integer NOT NULL,
      response_excerpt text,
      error text
    )`
  yield* sql`CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id, id)`
})
