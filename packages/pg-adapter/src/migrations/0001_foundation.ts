/** Tenants, people, API keys, custom field definitions, members and the outbox. */
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE tenants (
      id bigserial PRIMARY KEY,
      public_id text NOT NULL UNIQUE,
      name text NOT NULL,
      website text,
      currency text NOT NULL DEFAULT 'USD',
      invoice_prefix text NOT NULL DEFAULT 'INV-',
      net_terms integer NOT NULL DEFAULT 30,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`
    CREATE TABLE users (
      id bigserial PRIMARY KEY,
      tenant_id bigint NOT NULL REFERENCES tenants(id),
      email text NOT NULL,
      role text NOT NULL CHECK (role IN ('chamber_admin', 'staff')),
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (tenant_id, email)
    )`
  yield* sql`
    CREATE TABLE api_keys (
      id bigserial PRIMARY KEY,
      tenant_id bigint NOT NULL REFERENCES tenants(id),
      name text NOT NULL,
      prefix text NOT NULL,
      key_hash text NOT NULL UNIQUE,
      scopes jsonb NOT NULL,
      daily_limit integer NOT NULL DEFAULT 25000,
      created_by bigint REFERENCES users(id),
      created_at timestamptz NOT NULL DEFAULT now(),
      last_used_at timestamptz,
      revoked_at timestamptz
    )`
  yield* sql`CREATE INDEX api_keys_tenant ON api_keys (tenant_id, id)`
  yield* sql`CREATE INDEX api_keys_prefix ON api_keys (prefix)`
  yield* sql`
    CREATE TABLE custom_field_definitions (
      id bigserial PRIMARY KEY,
      tenant_id bigint NOT NULL REFERENCES tenants(id),
      resource text NOT NULL CHECK (resource IN ('member', 'contact')),
      key text NOT NULL,
      label text NOT NULL,
      api_visible boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (tenant_id, resource, key)
    )`
  yield* sql`
    CREATE TABLE members (
      id bigserial PRIMARY KEY,
      tenant_id bigint NOT NULL REFERENCES tenants(id),
      name text NOT NULL,
      slug text,
      status text NOT NULL CHECK (status IN ('active', 'pending', 'lapsed', 'former')),
      industry text,
      secondary_industries jsonb,
      slogan text,
      about text,
      website text,
      email text,
      phone text,
      address_line1 text,
      address_line2 text,
      city text,
      state text,
      zip text,
      member_since date,
      employee_count integer,
      directory_visible boolean NOT NULL DEFAULT true,
      custom_fields jsonb NOT NULL DEFAULT '{}'::jsonb,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE UNIQUE INDEX members_tenant_slug ON members (tenant_id, slug)`
  yield* sql`CREATE INDEX members_tenant_name ON members (tenant_id, (lower(name) COLLATE "C"), id)`
  yield* sql`CREATE INDEX members_tenant_created ON members (tenant_id, created_at, id)`
  yield* sql`CREATE INDEX members_tenant_email ON members (tenant_id, lower(email))`
  yield* sql`
    CREATE TABLE outbox_events (
      id bigserial PRIMARY KEY,
      event_id text NOT NULL UNIQUE,
      tenant_id bigint NOT NULL REFERENCES tenants(id),
      type text NOT NULL,
      payload jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX outbox_events_tenant ON outbox_events (tenant_id, id)`
})
