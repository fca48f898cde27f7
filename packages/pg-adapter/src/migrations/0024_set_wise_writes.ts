/**
 * Triggers whose work grew faster than the rows a transaction writes, for writes of many rows at
 * once (an import's batches, docs/architecture.md "Import").
 *
 * `member_counts` and `member_names` (migration 0011) kept once per inserting statement, not once
 * per inserted row: a statement's new members (its transition table) are counted by chamber and
 * status into one update of each slot row, and their names copied in one insert. Done per row, a
 * transaction that makes many members (an import's batches) updated the same slot row once per
 * member; each update of a row this transaction already updated leaves a version no one can
 * remove before the commit, which the next one steps over, so the cost grew with the square of the
 * members made. The figures are the same (`members` and `changes` each grow by the members
 * made); updates and deletes stay per row.
 *
 * Feed positions (migrations 0013, 0022): the trigger still runs for each of a transaction's events
 * as it commits, under the chamber's feed lock, but its first run for a chamber numbers all of the
 * transaction's events of that chamber in one update, in insertion order (those of the chamber
 * without a position are this transaction's: every committed event has one), and notes the highest
 * event it numbered in a setting of the transaction's (`chamber.feed_numbered_<chamber>`); each
 * later run finds its event at or below it and does nothing. The positions are those one update per event gave.
 */
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE FUNCTION members_track_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO member_counts AS c (tenant_id, status, slot, members, changes)
        SELECT tenant_id, status, pg_backend_pid() % 16, count(*), count(*) FROM added GROUP BY tenant_id, status
        ON CONFLICT (tenant_id, status, slot) DO UPDATE SET members = c.members + EXCLUDED.members, changes = c.changes + EXCLUDED.changes;
      INSERT INTO member_names (tenant_id, member_id, name_key, created_at) SELECT tenant_id, id, lower(name), created_at FROM added;
      RETURN NULL;
    END
    $$`
  yield* sql`DROP TRIGGER members_track ON members`
  yield* sql`CREATE TRIGGER members_track AFTER DELETE ON members FOR EACH ROW EXECUTE FUNCTION members_track()`
  yield* sql`
    CREATE TRIGGER members_track_inserted AFTER INSERT ON members REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION members_track_inserted()`
  yield* sql`
    CREATE OR REPLACE FUNCTION outbox_events_position() RETURNS trigger LANGUAGE plpgsql
    SET plan_cache_mode = force_custom_plan AS $$
    BEGIN
      -- Numbered already: the transaction's setting names the highest event it numbered for the chamber.
      IF NEW.id <= coalesce(nullif(current_setting('chamber.feed_numbered_' || NEW.tenant_id, true), ''), '0')::bigint THEN
        RETURN NULL;
      END IF;
      PERFORM pg_advisory_xact_lock(5102027, (NEW.tenant_id % 2147483647)::integer);
      UPDATE outbox_events o SET position = greatest(
          (SELECT max(position) FROM outbox_events WHERE tenant_id = NEW.tenant_id),
          (SELECT through FROM outbox_pruned WHERE tenant_id = NEW.tenant_id),
          0) + n.rank
        FROM (SELECT id, row_number() OVER (ORDER BY id) AS rank FROM outbox_events
              WHERE tenant_id = NEW.tenant_id AND position IS NULL) n
        WHERE o.id = n.id;
      PERFORM set_config('chamber.feed_numbered_' || NEW.tenant_id,
        (SELECT max(id) FROM outbox_events WHERE tenant_id = NEW.tenant_id)::text, true);
      RETURN NULL;
    END
    $$`
})
