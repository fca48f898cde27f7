/**
 * Feed positions of each chamber's own (ruling 29: cursors reveal nothing of other chambers'
 * activity; docs/architecture.md "The change feed"). An event's position was drawn from one
 * sequence shared by every chamber, so the gap between two of a chamber's cursors counted the
 * events of all the others. From here the trigger gives each event the chamber's next position:
 * one past the highest it has given the chamber (kept events, or the highest pruned), found in
 * the `(tenant_id, position)` index under the chamber's feed lock, which still serializes the
 * chamber's commits, so positions keep following commit order without gaps that fill in later.
 * A chamber's positions continue from the highest one it had, so every cursor given before names
 * the same place. Planned at each run, as migration 0021 made it (a replaced function loses its
 * settings): its lookups must not keep a plan made while the table was empty.
 */
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE OR REPLACE FUNCTION outbox_events_position() RETURNS trigger LANGUAGE plpgsql
    SET plan_cache_mode = force_custom_plan AS $$
    BEGIN
      PERFORM pg_advisory_xact_lock(5102027, (NEW.tenant_id % 2147483647)::integer);
      UPDATE outbox_events SET position = greatest(
          (SELECT max(position) FROM outbox_events WHERE tenant_id = NEW.tenant_id),
          (SELECT through FROM outbox_pruned WHERE tenant_id = NEW.tenant_id),
          0) + 1
        WHERE id = NEW.id;
      RETURN NULL;
    END
    $$`
  yield* sql`DROP SEQUENCE outbox_positions`
})
