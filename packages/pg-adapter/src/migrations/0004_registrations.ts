/** Event registrations (docs/api.md "Events"). */
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE registrations (
      id bigserial PRIMARY KEY,
      tenant_id bigint NOT NULL REFERENCES tenants(id),
      event_id bigint NOT NULL REFERENCES events(id),
      member_id bigint REFERENCES members(id),
      contact_id bigint REFERENCES contacts(id),
      first_name text,
      last_name text,
      email text,
      status text NOT NULL CHECK (status IN ('registered', 'waitlisted', 'cancelled', 'attended')),
      source text,
      price_cents bigint,
      guest_count integer,
      registered_at timestamptz,
      checked_in_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX registrations_event ON registrations (tenant_id, event_id, registered_at, id)`
})
