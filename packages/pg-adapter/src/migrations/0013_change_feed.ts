/**
 * The change feed (docs/architecture.md "The change feed"): every event gets its `position`, the
 * order of the feed, when its transaction commits, never before. A deferred constraint trigger
 * runs as the transaction commits: it takes the chamber's feed lock (held until the commit has
 * made the rows visible) and numbers the transaction's events from one sequence. Two transactions
 * of one chamber therefore number and commit one after the other, so a reader that sees a position
 * sees every smaller one of that chamber: no gap ever fills in later.
 * `outbox_pruned` keeps, per chamber, the highest position pruned: a cursor below it is too old.
 */
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE SEQUENCE outbox_positions`
  yield* sql`ALTER TABLE outbox_events ADD COLUMN position bigint`
  // Events committed before this migration keep their insertion order.
  yield* sql`UPDATE outbox_events SET position = id`
  yield* sql`SELECT setval('outbox_positions', greatest((SELECT max(id) FROM outbox_events), 1))`
  yield* sql`CREATE UNIQUE INDEX outbox_events_feed ON outbox_events (tenant_id, position)`
  // Lock namespace 5_102_027 (contacts' subscribes use 5_102_026); the second key is the chamber.
  yield* sql`
    CREATE FUNCTION outbox_events_position() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_advisory_xact_lock(5102027, (NEW.tenant_id % 2147483647)::integer);
      UPDATE outbox_events SET position = nextval('outbox_positions') WHERE id = NEW.id;
      RETURN NULL;
    END
    $$`
  yield* sql`
    CREATE CONSTRAINT TRIGGER outbox_events_position AFTER INSERT ON outbox_events
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION outbox_events_position()`
  yield* sql`
    CREATE TABLE outbox_pruned (
      tenant_id bigint PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
      through bigint NOT NULL
    )`
})
