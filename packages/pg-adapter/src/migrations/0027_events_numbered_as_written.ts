/**
 * Events numbered as they are written, for a transaction that appends many (an import: Outbox
 * `appendingAtEnd`, docs/architecture.md "The change feed"). Numbering at commit
 * (`outbox_events_position`, migrations 0013, 0022, 0024, 0026) updates every event row the
 * transaction wrote, once more: for an import of 150,000 records, seconds of its commit. Such a
 * transaction now writes its events last, under the chamber's feed lock, each with its position,
 * and the commit has none left to number.
 *
 * - `chamber_feed_lock(tenant)`: the chamber's feed lock (lock namespace 5,102,027, the second key
 *   the chamber), held to the end of the transaction. Whoever numbers a chamber's events takes it
 *   first, so positions follow commit order and no gap fills in later.
 * - `chamber_feed_last(tenant)`: the highest position the chamber has given, kept or pruned; the
 *   next event is one past it.
 * - The commit's trigger runs only for events written without a position.
 *
 * The trigger's function keeps its settings (migrations 0021, 0026): a replacement sets them again.
 */
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE FUNCTION chamber_feed_lock(tenant bigint) RETURNS void LANGUAGE sql AS $$
      SELECT pg_advisory_xact_lock(5102027, (tenant % 2147483647)::integer)
    $$`
  yield* sql`
    CREATE FUNCTION chamber_feed_last(tenant bigint) RETURNS bigint LANGUAGE sql STABLE AS $$
      SELECT greatest(
        (SELECT max(position) FROM outbox_events WHERE tenant_id = tenant),
        (SELECT through FROM outbox_pruned WHERE tenant_id = tenant),
        0)
    $$`
  yield* sql`
    CREATE OR REPLACE FUNCTION outbox_events_position() RETURNS trigger LANGUAGE plpgsql
    SET plan_cache_mode = force_custom_plan SET enable_bitmapscan = off AS $$
    DECLARE
      last bigint;
    BEGIN
      -- Numbered already: the transaction's setting names the highest event it numbered for the chamber.
      IF NEW.id <= coalesce(nullif(current_setting('chamber.feed_numbered_' || NEW.tenant_id, true), ''), '0')::bigint THEN
        RETURN NULL;
      END IF;
      PERFORM chamber_feed_lock(NEW.tenant_id);
      last := chamber_feed_last(NEW.tenant_id);
      UPDATE outbox_events o SET position = last + n.rank
        FROM (SELECT id, row_number() OVER (ORDER BY id) AS rank FROM outbox_events
              WHERE tenant_id = NEW.tenant_id AND position IS NULL) n
        WHERE o.id = n.id;
      PERFORM set_config('chamber.feed_numbered_' || NEW.tenant_id,
        (SELECT max(id) FROM outbox_events WHERE tenant_id = NEW.tenant_id)::text, true);
      RETURN NULL;
    END
    $$`
  yield* sql`DROP TRIGGER outbox_events_position ON outbox_events`
  yield* sql`
    CREATE CONSTRAINT TRIGGER outbox_events_position AFTER INSERT ON outbox_events
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.position IS NULL) EXECUTE FUNCTION outbox_events_position()`
})
