/**
 * Ordered delivery (ruling 32, docs/webhooks.md "Order"): the deliveries of one subscription and
 * one resource are attempted one at a time, in commit order.
 *
 * - `resource`: the resource the event is about, its collection and id (`members/12`, core
 *   EventResource.ts).
 * - `held`: waiting behind an earlier delivery of the same subscription and resource that is still
 *   pending. A held delivery is not in the claim's index at all, so however many wait behind a
 *   delivery that retries for hours, a claim never reads them. The rule kept: the first pending
 *   delivery of each subscription and resource (by event id, which is commit order there: see
 *   pg-adapter OutboxSql.ts) is never held. A delivery is written held when an earlier one of its
 *   subscription and resource is pending (OutboxSql.ts); when a pending delivery is settled, the
 *   trigger below lets the next one of its subscription and resource go. A settled delivery is
 *   never held, so one queued again (a replay) is not held either: it is ordered by the claim
 *   (webhook-relay DeliveryStore.ts).
 *
 * The trigger runs its statement with a snapshot of its own, taken after the settling row was
 * locked: a delivery that a writer committed while the relay waited for that lock is seen and let
 * go (the writer holds the lock on the pending delivery it queued behind; DeliveryStore.ts takes
 * the rows it settles FOR UPDATE).
 */
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE webhook_deliveries ADD COLUMN resource text, ADD COLUMN held boolean NOT NULL DEFAULT false`
  yield* sql`
    UPDATE webhook_deliveries d SET resource = (CASE e.type
        WHEN 'member.created' THEN 'members' WHEN 'member.updated' THEN 'members'
        WHEN 'contact.created' THEN 'contacts'
        WHEN 'invoice.issued' THEN 'invoices' WHEN 'invoice.paid' THEN 'invoices'
        WHEN 'event.registration.created' THEN 'registrations'
        WHEN 'deal.approved' THEN 'deals'
        ELSE e.type END) || '/' || coalesce(e.payload ->> 'id', e.event_id)
    FROM outbox_events e WHERE e.id = d.event_id`
  yield* sql`ALTER TABLE webhook_deliveries ALTER COLUMN resource SET NOT NULL`
  // The deliveries already waiting behind an earlier one of their subscription and resource.
  yield* sql`
    UPDATE webhook_deliveries d SET held = true FROM (
      SELECT id, row_number() OVER (PARTITION BY hook_id, resource ORDER BY event_id) AS place
      FROM webhook_deliveries WHERE status = 'pending'
    ) w WHERE w.id = d.id AND w.place > 1`
  // Per subscription and resource, its pending deliveries in commit order: the first, the one
  // before a given one, the one a writer queues behind.
  yield* sql`CREATE INDEX webhook_deliveries_resource ON webhook_deliveries (hook_id, resource, event_id) WHERE status = 'pending'`
  // The claim's: only deliveries free to go.
  yield* sql`CREATE INDEX webhook_deliveries_hook_ready ON webhook_deliveries (hook_id, next_attempt_at, id) WHERE status = 'pending' AND NOT held`
  yield* sql`DROP INDEX webhook_deliveries_hook_due`
  yield* sql`ALTER INDEX webhook_deliveries_hook_ready RENAME TO webhook_deliveries_hook_due`
  // Leased deliveries per subscription, and per resource: one of a resource at a time.
  yield* sql`
    CREATE INDEX webhook_deliveries_leased ON webhook_deliveries (hook_id, resource, lease_expires_at)
    WHERE status = 'pending' AND lease_expires_at IS NOT NULL`
  yield* sql`DROP INDEX webhook_deliveries_hook_leased`
  yield* sql`ALTER INDEX webhook_deliveries_leased RENAME TO webhook_deliveries_hook_leased`
  yield* sql`
    CREATE FUNCTION webhook_deliveries_next() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE webhook_deliveries SET held = false
      WHERE id = (
        SELECT id FROM webhook_deliveries
        WHERE hook_id = NEW.hook_id AND resource = NEW.resource AND status = 'pending'
        ORDER BY event_id LIMIT 1
      ) AND held;
      RETURN NULL;
    END
    $$`
  yield* sql`
    CREATE TRIGGER webhook_deliveries_next AFTER UPDATE OF status ON webhook_deliveries FOR EACH ROW
    WHEN (OLD.status = 'pending' AND NEW.status <> 'pending')
    EXECUTE FUNCTION webhook_deliveries_next()`
})
