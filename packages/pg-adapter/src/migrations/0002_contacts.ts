/** Contacts and their newsletter subscription (docs/api.md "Contacts and subscribers"). */
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE contacts (
      id bigserial PRIMARY KEY,
      tenant_id bigint NOT NULL REFERENCES tenants(id),
      member_id bigint REFERENCES members(id),
      first_name text NOT NULL,
      last_name text NOT NULL,
      email text,
      phone text,
      title text,
      custom_fields jsonb NOT NULL DEFAULT '{}'::jsonb,
      subscribed_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX contacts_tenant_last_name ON contacts (tenant_id, (lower(last_name) COLLATE "C"), id)`
  yield* sql`CREATE INDEX contacts_tenant_created ON contacts (tenant_id, created_at, id)`
  yield* sql`CREATE INDEX contacts_tenant_email ON contacts (tenant_id, lower(email), id)`
})
