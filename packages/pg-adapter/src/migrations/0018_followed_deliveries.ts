/**
 * Settling a delivery looks for the next one of its subscription and resource only when one was
 * queued behind it (ruling 32, docs/webhooks.md "Order"). `followed`: a writer queued a delivery
 * behind this one, the first pending of its subscription and resource (pg-adapter OutboxSql.ts),
 * or this one became the first with others still waiting behind it. The trigger of migration 0016
 * now runs only for a followed delivery: it lets the next one go, which is followed in turn when
 * others wait behind it; and when the next one is already free (queued again by a replay), it
 * passes the mark on to it, so what waits behind is let go when that one settles.
 *
 * The deliveries already waiting with another of their subscription and resource are marked.
 */
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE webhook_deliveries ADD COLUMN followed boolean NOT NULL DEFAULT false`
  yield* sql`
    UPDATE webhook_deliveries d SET followed = true
    WHERE d.status = 'pending' AND EXISTS (
      SELECT 1 FROM webhook_deliveries o
      WHERE o.hook_id = d.hook_id AND o.resource = d.resource AND o.status = 'pending' AND o.event_id > d.event_id
    )`
  yield* sql`
    CREATE OR REPLACE FUNCTION webhook_deliveries_next() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE webhook_deliveries n SET held = false, followed = EXISTS (
        SELECT 1 FROM webhook_deliveries l
        WHERE l.hook_id = n.hook_id AND l.resource = n.resource AND l.status = 'pending' AND l.event_id > n.event_id
      )
      WHERE n.id = (
        SELECT id FROM webhook_deliveries
        WHERE hook_id = NEW.hook_id AND resource = NEW.resource AND status = 'pending'
        ORDER BY event_id LIMIT 1
      ) AND (n.held OR NOT n.followed);
      RETURN NULL;
    END
    $$`
  yield* sql`DROP TRIGGER webhook_deliveries_next ON webhook_deliveries`
  yield* sql`
    CREATE TRIGGER webhook_deliveries_next AFTER UPDATE OF status ON webhook_deliveries FOR EACH ROW
    WHEN (OLD.status = 'pending' AND NEW.status <> 'pending' AND OLD.followed)
    EXECUTE FUNCTION webhook_deliveries_next()`
})
