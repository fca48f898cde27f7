/** Events (docs/api.md "Events"). */
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE events (
      id bigserial PRIMARY KEY,
      tenant_id bigint NOT NULL REFERENCES tenants(id),
      title text NOT NULL,
      slug text,
      status text NOT NULL CHECK (status IN ('draft', 'published', 'cancelled', 'completed')),
      venue text,
      city text,
      state text,
      starts_at timestamptz NOT NULL,
      ends_at timestamptz,
      capacity integer,
      is_public boolean NOT NULL DEFAULT false,
      description text,
      address text,
      event_type text NOT NULL DEFAULT 'chamber' CHECK (event_type IN ('chamber', 'member', 'community')),
      is_featured boolean,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX events_tenant_starts ON events (tenant_id, starts_at, id)`
  yield* sql`CREATE INDEX events_tenant_created ON events (tenant_id, created_at, id)`
})
