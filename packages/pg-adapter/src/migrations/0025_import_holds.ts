/**
 * Imports written in slices (docs/architecture.md "On the embedded database: slices under a hold"):
 * an import that cannot hold the database for its whole length writes its records in short
 * transactions of their own, each row marked with the import's hold, and publishes them all at once
 * by deleting the hold.
 *
 * - `import_holds`: an import under way. `fence` is the chamber's highest feed position when it
 *   began: while the hold is open the chamber's feed reads no further (every event committed since,
 *   the import's or not, is above it). `invoice_number` is the chamber's last invoice number when
 *   it began, given back when the import is discarded (unless the API has issued one since). `pid`
 *   is the importing process (on this machine: the embedded database is reached through a local
 *   socket) and `touched_at` moves with each slice, so a hold whose import died is told apart from
 *   one still writing.
 * - `held_by` on every table an import writes but `webhook_deliveries`, whose rows are held with
 *   their event: the hold of the import that wrote the row, taken from the transaction's setting
 *   `chamber.hold`, which only an import's slices set. A row is shown when it has no hold, when its
 *   hold is gone (published), or to the slices of its own import (repos/HeldRows.ts). Rows keep the
 *   number after publishing; nothing reads it then.
 * - `member_counts`: a hold's members are counted on a slot of their own (minus the hold), marked
 *   with it, so a list's total leaves them out until the hold goes and then counts them at once.
 * - A held custom field definition marks no member or contact changed until it is published.
 */
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"

/** The tables whose rows an import writes. */
const HELD_TABLES = [
  "members",
  "member_names",
  "contacts",
  "events",
  "registrations",
  "deals",
  "invoices",
  "invoice_lines",
  "payments",
  "sponsorships",
  "booking_types",
  "bookings",
  "custom_field_definitions",
  "outbox_events"
] as const

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE import_holds (
      id bigserial PRIMARY KEY,
      tenant_id bigint NOT NULL REFERENCES tenants(id),
      fence bigint NOT NULL,
      invoice_number bigint,
      pid integer NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      touched_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX import_holds_tenant ON import_holds (tenant_id)`
  for (const table of HELD_TABLES) {
    yield* sql.unsafe(`ALTER TABLE ${table} ADD COLUMN held_by bigint DEFAULT nullif(current_setting('chamber.hold', true), '')::bigint`)
    // What a discarded or abandoned import removes, found without reading the rest.
    yield* sql.unsafe(`CREATE INDEX ${table}_held ON ${table} (held_by) WHERE held_by IS NOT NULL`)
  }
  yield* sql`ALTER TABLE member_counts ADD COLUMN held_by bigint`
  // The views the API reads sponsorships, placements and bookings through carry the mark too.
  yield* sql`
    CREATE OR REPLACE VIEW sponsorships_shown AS
    SELECT s.id, s.tenant_id, s.member_id, m.name AS member_name, s.name, s.status, s.starts_on, s.ends_on,
           s.sponsorship_package_id, s.tier, s.event_id, s.created_at, s.updated_at, s.held_by
    FROM sponsorships s
    LEFT JOIN members m ON m.tenant_id = s.tenant_id AND m.id = s.member_id
    WHERE s.kind IN ('tier', 'logo_wall')`
  yield* sql`
    CREATE OR REPLACE VIEW placements_shown AS
    SELECT p.id, p.tenant_id, p.member_id, p.ad_slot, p.ad_kind, p.ad_headline, p.ad_body, p.ad_cta_label, p.ad_link_url,
           p.ad_image_url, p.is_house_ad, p.is_included_benefit, p.starts_on, p.ends_on, p.status, p.impressions, p.clicks,
           CASE WHEN p.impressions > 0 THEN p.clicks::float8 / p.impressions ELSE 0::float8 END AS ctr,
           p.created_at, p.updated_at, p.held_by
    FROM sponsorships p
    WHERE p.kind = 'ad'`
  yield* sql`
    CREATE OR REPLACE VIEW bookings_shown AS
    SELECT b.id, b.tenant_id, b.booking_type_id, t.name AS booking_type_name, b.starts_at, b.ends_at, b.status,
           b.cancelled_at, b.member_id, b.contact_id, b.created_at, b.updated_at, b.held_by
    FROM bookings b
    LEFT JOIN booking_types t ON t.tenant_id = b.tenant_id AND t.id = b.booking_type_id`

  // Counts and names kept beside the members carry the member's hold (migrations 0011, 0024).
  yield* sql`
    CREATE OR REPLACE FUNCTION member_counts_add(tenant bigint, member_status text, delta bigint, hold bigint) RETURNS void LANGUAGE sql AS $$
      INSERT INTO member_counts AS c (tenant_id, status, slot, members, changes, held_by)
      VALUES (tenant, member_status, CASE WHEN hold IS NULL THEN pg_backend_pid() % 16 ELSE -hold::integer END, delta, 1, hold)
      ON CONFLICT (tenant_id, status, slot) DO UPDATE SET members = c.members + EXCLUDED.members, changes = c.changes + 1
    $$`
  yield* sql`
    CREATE OR REPLACE FUNCTION members_track() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP IN ('UPDATE', 'DELETE') THEN
        PERFORM member_counts_add(OLD.tenant_id, OLD.status, -1, OLD.held_by);
        DELETE FROM member_names WHERE tenant_id = OLD.tenant_id AND member_id = OLD.id;
      END IF;
      IF TG_OP IN ('INSERT', 'UPDATE') THEN
        PERFORM member_counts_add(NEW.tenant_id, NEW.status, 1, NEW.held_by);
        INSERT INTO member_names (tenant_id, member_id, name_key, created_at, held_by) VALUES (NEW.tenant_id, NEW.id, lower(NEW.name), NEW.created_at, NEW.held_by);
      END IF;
      RETURN NULL;
    END
    $$`
  yield* sql`
    CREATE OR REPLACE FUNCTION members_track_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO member_counts AS c (tenant_id, status, slot, members, changes, held_by)
        SELECT tenant_id, status, CASE WHEN held_by IS NULL THEN pg_backend_pid() % 16 ELSE -held_by::integer END, count(*), count(*), held_by
        FROM added GROUP BY tenant_id, status, held_by
        ON CONFLICT (tenant_id, status, slot) DO UPDATE SET members = c.members + EXCLUDED.members, changes = c.changes + EXCLUDED.changes;
      INSERT INTO member_names (tenant_id, member_id, name_key, created_at, held_by) SELECT tenant_id, id, lower(name), created_at, held_by FROM added;
      RETURN NULL;
    END
    $$`
  yield* sql`DROP FUNCTION member_counts_add(bigint, text, bigint)`
  // A custom field definition an import holds shows no value until the import is published, so
  // it marks no member or contact changed before (migration 0014); publishing marks them.
  yield* sql`
    CREATE OR REPLACE FUNCTION custom_field_shown_values(field custom_field_definitions) RETURNS void LANGUAGE plpgsql AS $$
    BEGIN
      IF field.held_by IS NOT NULL AND EXISTS (SELECT 1 FROM import_holds WHERE id = field.held_by) THEN
        RETURN;
      END IF;
      EXECUTE format('UPDATE %I SET updated_at = row_written_at() WHERE tenant_id = $1 AND custom_fields ? $2', field.resource || 's')
        USING field.tenant_id, field.key;
    END
    $$`
})
