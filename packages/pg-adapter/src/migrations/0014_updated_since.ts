/**
 * Incremental sync on lists (ruling 30, docs/api.md "Incremental sync"): `updated_at` moves with
 * every change of a row, derived ones included, and each list can read its rows by it.
 *
 * - `updated_at` is set by the database, never by a caller, in whole milliseconds as the API
 *   shows it (rows that look equal sort by id): on insert, the row's `created_at`; on every update
 *   that changes the row, the clock when the row is written (its lock held), and always at least
 *   a millisecond past its previous value, so every change moves it. An update that changes
 *   nothing leaves it; one that sets `updated_at` (whatever to) marks the row changed.
 * - A change shown on other rows moves theirs: a member's name (the `member_name` of its
 *   sponsorships), a booking type's name (its bookings' `booking_type_name`), and a custom field
 *   definition made, dropped or turned visible or hidden (the `custom_fields` of the members or
 *   contacts that hold a value for it).
 * - `(tenant_id, updated_at, id)` indexes serve `updated_since` and `sort=updated_at`; an event's
 *   registrations are read within the event.
 */
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"

/** The tables of the lists whose items carry `updated_at` (the webhook list is not one). */
const LISTED = ["members", "contacts", "events", "registrations", "deals", "invoices", "payments", "sponsorships", "bookings"]

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE FUNCTION row_written_at() RETURNS timestamptz LANGUAGE sql VOLATILE AS $$
      SELECT date_trunc('milliseconds', clock_timestamp())
    $$`
  yield* sql`
    CREATE FUNCTION rows_stamp_updated_at() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        NEW.updated_at := date_trunc('milliseconds', NEW.created_at);
        RETURN NEW;
      END IF;
      IF NEW.updated_at IS NOT DISTINCT FROM OLD.updated_at AND NEW IS NOT DISTINCT FROM OLD THEN
        RETURN NEW;
      END IF;
      NEW.updated_at := greatest(row_written_at(), date_trunc('milliseconds', OLD.updated_at) + interval '1 millisecond');
      RETURN NEW;
    END
    $$`
  for (const table of LISTED) {
    yield* sql`CREATE TRIGGER ${sql.literal(`${table}_stamp_updated_at`)} BEFORE INSERT OR UPDATE ON ${sql.literal(table)}
      FOR EACH ROW EXECUTE FUNCTION rows_stamp_updated_at()`
  }

  // Rows that show another row's value are marked changed when that value changes. The trigger's
  // arguments: the table of the rows showing it, their column naming the changed row, and which
  // of them show it.
  yield* sql`
    CREATE FUNCTION shown_value_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      EXECUTE format('UPDATE %I SET updated_at = row_written_at() WHERE tenant_id = $1 AND %I = $2 AND (%s)', TG_ARGV[0], TG_ARGV[1], TG_ARGV[2])
        USING NEW.tenant_id, NEW.id;
      RETURN NULL;
    END
    $$`
  yield* sql`
    CREATE TRIGGER members_renamed AFTER UPDATE OF name ON members FOR EACH ROW
    WHEN (OLD.name IS DISTINCT FROM NEW.name) EXECUTE FUNCTION shown_value_changed('sponsorships', 'member_id', 'kind IN (''tier'', ''logo_wall'')')`
  yield* sql`
    CREATE TRIGGER booking_types_renamed AFTER UPDATE OF name ON booking_types FOR EACH ROW
    WHEN (OLD.name IS DISTINCT FROM NEW.name) EXECUTE FUNCTION shown_value_changed('bookings', 'booking_type_id', 'true')`
  // A custom field's values are shown by the members or contacts (its resource) holding one.
  yield* sql`
    CREATE FUNCTION custom_field_shown_values(field custom_field_definitions) RETURNS void LANGUAGE plpgsql AS $$
    BEGIN
      EXECUTE format('UPDATE %I SET updated_at = row_written_at() WHERE tenant_id = $1 AND custom_fields ? $2', field.resource || 's')
        USING field.tenant_id, field.key;
    END
    $$`
  yield* sql`
    CREATE FUNCTION custom_fields_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.api_visible
        AND (TG_OP = 'DELETE' OR (OLD.tenant_id, OLD.resource, OLD.key, OLD.api_visible) IS DISTINCT FROM (NEW.tenant_id, NEW.resource, NEW.key, NEW.api_visible)) THEN
        PERFORM custom_field_shown_values(OLD);
      END IF;
      IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.api_visible
        AND (TG_OP = 'INSERT' OR (OLD.tenant_id, OLD.resource, OLD.key, OLD.api_visible) IS DISTINCT FROM (NEW.tenant_id, NEW.resource, NEW.key, NEW.api_visible)) THEN
        PERFORM custom_field_shown_values(NEW);
      END IF;
      RETURN NULL;
    END
    $$`
  yield* sql`
    CREATE TRIGGER custom_fields_changed AFTER INSERT OR UPDATE OR DELETE ON custom_field_definitions
    FOR EACH ROW EXECUTE FUNCTION custom_fields_changed()`

  for (const table of LISTED.filter((t) => t !== "registrations")) {
    yield* sql`CREATE INDEX ${sql.literal(`${table}_tenant_updated`)} ON ${sql.literal(table)} (tenant_id, updated_at, id)`
  }
  yield* sql`CREATE INDEX registrations_event_updated ON registrations (tenant_id, event_id, updated_at, id)`
  yield* sql`CREATE INDEX sponsorships_tenant_member ON sponsorships (tenant_id, member_id)`
})
