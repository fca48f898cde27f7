/**
 * Lists of large chambers (docs/api.md "Lists, paging, sorting"): what a members page reads
 * stays the same size however many members a chamber has.
 *
 * - `member_counts`: each chamber's members by status, kept exact by triggers in the writing
 *   transaction, so a list's total is a sum of a few rows instead of a count of every member.
 *   A writer adds to the row of its connection's slot (its backend pid modulo 16): concurrent
 *   creates in one chamber then hold different rows until they commit, instead of queueing on
 *   one. A slot's figure may go below zero (a member made on one slot, changed on another);
 *   the sum over the slots is the count. `changes` counts the writes that add, remove, rename,
 *   re-date or move a member: its sum is the chamber's members version, which moves whenever
 *   what a name search finds may have changed (kept search results are checked against it).
 * - `member_names`: each member's name lower-cased (as ILIKE compares it) and creation time,
 *   kept by the same triggers. A name search reads these narrow rows, through a trigram index
 *   when pg_trgm is available, instead of every wide member row.
 * - The members list's two order indexes include the name and the status: the ids a page skips
 *   are read from the index alone.
 *
 * pg_trgm is a trusted extension in PostgreSQL 13 and later, so the database owner may create
 * it; PGlite loads it. Where it cannot be created (not installed, no privilege) the migration
 * still succeeds, with a warning: a name search then reads every name of the chamber from
 * `member_names`, which is correct and slower (docs/operations.md "PostgreSQL").
 */
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE member_counts (
      tenant_id bigint NOT NULL,
      status text NOT NULL,
      slot integer NOT NULL,
      members bigint NOT NULL,
      changes bigint NOT NULL DEFAULT 0,
      PRIMARY KEY (tenant_id, status, slot)
    )`
  yield* sql`
    CREATE TABLE member_names (
      tenant_id bigint NOT NULL,
      member_id bigint NOT NULL,
      name_key text COLLATE "C" NOT NULL,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, member_id)
    )`
  yield* sql`
    CREATE FUNCTION member_counts_add(tenant bigint, member_status text, delta bigint) RETURNS void LANGUAGE sql AS $$
      INSERT INTO member_counts AS c (tenant_id, status, slot, members, changes) VALUES (tenant, member_status, pg_backend_pid() % 16, delta, 1)
      ON CONFLICT (tenant_id, status, slot) DO UPDATE SET members = c.members + EXCLUDED.members, changes = c.changes + 1
    $$`
  // Updates reach it only when one of the columns it keeps changed (the trigger's WHEN).
  yield* sql`
    CREATE FUNCTION members_track() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP IN ('UPDATE', 'DELETE') THEN
        PERFORM member_counts_add(OLD.tenant_id, OLD.status, -1);
        DELETE FROM member_names WHERE tenant_id = OLD.tenant_id AND member_id = OLD.id;
      END IF;
      IF TG_OP IN ('INSERT', 'UPDATE') THEN
        PERFORM member_counts_add(NEW.tenant_id, NEW.status, 1);
        INSERT INTO member_names (tenant_id, member_id, name_key, created_at) VALUES (NEW.tenant_id, NEW.id, lower(NEW.name), NEW.created_at);
      END IF;
      RETURN NULL;
    END
    $$`
  // The versions only ever grow: a kept search result is never taken for one of new members.
  yield* sql`
    CREATE FUNCTION members_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE member_counts SET members = 0, changes = changes + 1;
      DELETE FROM member_names;
      RETURN NULL;
    END
    $$`
  yield* sql`CREATE TRIGGER members_track AFTER INSERT OR DELETE ON members FOR EACH ROW EXECUTE FUNCTION members_track()`
  yield* sql`
    CREATE TRIGGER members_track_update AFTER UPDATE OF tenant_id, id, status, name, created_at ON members FOR EACH ROW
    WHEN ((OLD.tenant_id, OLD.id, OLD.status, OLD.name, OLD.created_at) IS DISTINCT FROM (NEW.tenant_id, NEW.id, NEW.status, NEW.name, NEW.created_at))
    EXECUTE FUNCTION members_track()`
  yield* sql`CREATE TRIGGER members_track_truncate AFTER TRUNCATE ON members FOR EACH STATEMENT EXECUTE FUNCTION members_truncated()`
  // The triggers hold off other writers of members until this transaction commits: the backfill
  // counts every member, and every later write is counted by the triggers.
  yield* sql`
    INSERT INTO member_counts (tenant_id, status, slot, members)
    SELECT tenant_id, status, 0, count(*) FROM members GROUP BY tenant_id, status`
  yield* sql`INSERT INTO member_names (tenant_id, member_id, name_key, created_at) SELECT tenant_id, id, lower(name), created_at FROM members`
  // The list orders' indexes also carry what a page's ids are read by (the name, the status),
  // so skipping to a page reads the index alone (once vacuum has marked the pages all-visible).
  yield* sql`CREATE INDEX members_tenant_name_covering ON members (tenant_id, (lower(name) COLLATE "C"), id) INCLUDE (name, status)`
  yield* sql`DROP INDEX members_tenant_name`
  yield* sql`ALTER INDEX members_tenant_name_covering RENAME TO members_tenant_name`
  yield* sql`CREATE INDEX members_tenant_created_covering ON members (tenant_id, created_at, id) INCLUDE (status)`
  yield* sql`DROP INDEX members_tenant_created`
  yield* sql`ALTER INDEX members_tenant_created_covering RENAME TO members_tenant_created`
  yield* sql`
    DO $$
    DECLARE
      opclass text;
    BEGIN
      CREATE EXTENSION IF NOT EXISTS pg_trgm;
      SELECT quote_ident(n.nspname) || '.gin_trgm_ops' INTO STRICT opclass
        FROM pg_opclass c JOIN pg_namespace n ON n.oid = c.opcnamespace JOIN pg_am a ON a.oid = c.opcmethod
        WHERE c.opcname = 'gin_trgm_ops' AND a.amname = 'gin';
      EXECUTE format('CREATE INDEX member_names_trigrams ON member_names USING gin (name_key %s)', opclass);
    EXCEPTION WHEN OTHERS THEN
      RAISE WARNING 'pg_trgm is not available (%): member name searches will read every name of a chamber', SQLERRM;
    END
    $$`
})
