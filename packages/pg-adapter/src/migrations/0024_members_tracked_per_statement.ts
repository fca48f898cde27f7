/**
 * `member_counts` and `member_names` (migration 0011) kept once per inserting statement, not once
 * per inserted row: a statement's new members (its transition table) are counted by chamber and
 * status into one update of each slot row, and their names copied in one insert. Done per row, a
 * transaction that makes many members (an import's batches) updated the same slot row once per
 * member; each update of a row this transaction already updated leaves a version no one can
 * remove before the commit, which the next one steps over, so the cost grew with the square of the
 * members made. The figures are the same (`members` and `changes` each grow by the members
 * made); updates and deletes stay per row.
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
})
