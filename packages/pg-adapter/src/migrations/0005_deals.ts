/** Hot Deals (docs/api.md "Deals"). */
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE deals (
      id bigserial PRIMARY KEY,
      tenant_id bigint NOT NULL REFERENCES tenants(id),
      member_id bigint NOT NULL REFERENCES members(id),
      title text NOT NULL,
      slug text,
      discount_label text,
      status text NOT NULL CHECK (status IN ('pending', 'approved', 'rejected')),
      audience text NOT NULL CHECK (audience IN ('public', 'members')),
      starts_at timestamptz,
      ends_at timestamptz,
      is_featured boolean NOT NULL DEFAULT false,
      description text,
      terms text,
      cta_url text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX deals_tenant_created ON deals (tenant_id, created_at, id)`
})
