/**
 * The relay's side of the delivery tables over SQL (core `DeliveryStore`, docs/webhooks.md
 * "Delivery"): claims with `FOR UPDATE SKIP LOCKED` and leases, outcomes recorded and deliveries
 * settled one statement per batch, the relay's lock on a connection of its own, pruning.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import {
  type AttemptOutcome,
  type Claimed,
  type ClaimedDelivery,
  type ClaimOptions,
  DEACTIVATE_AFTER,
  DeliveryStore,
  type EventKind,
  OutcomesRefused,
  PROBE_AFTER_TIMEOUTS,
  type Recorded,
  RelayPresenceLost,
  RETRIES_PER_DELIVERY,
  WebhookSecrets
} from "@chamber/core"
import { isoColumn } from "./IsoColumn.ts"
import { andShownDelivery, ImportSlices } from "./HeldRows.ts"

/** The advisory-lock namespace of running relays (the second key is the relay's row in webhook_relays, migration 0019). */
export const RELAY_LOCK = 5_102_028

/** SQLSTATE classes of errors in the statement's data or in the statement itself: the same statement fails again. */
const REFUSING_CLASSES = ["22", "23", "42"]

/** Whether the database refused the statement for good, rather than being away or busy (connection, deadlock, shutdown). */
const refused = (error: SqlError): boolean => {
  const code = (error.reason.cause as { readonly code?: unknown } | undefined)?.code
  return typeof code === "string" && REFUSING_CLASSES.includes(code.slice(0, 2)) && code !== "42501"
}

/** Text PostgreSQL can store: a NUL and an unpaired surrogate (which `text` and `jsonb` refuse) become U+FFFD. */
const storable = (text: string | null): string | null =>
  text === null ? null : text.replace(/\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "\uFFFD")

type ClaimRow =
  | {
    readonly capped: false
    readonly id: string
    readonly tenant_id: string
    readonly hook_id: string
    readonly url: string
    readonly secret: string
    readonly attempt_count: number
    readonly event_id: string
    readonly type: EventKind
    readonly created_at: string
    readonly payload: unknown
  }
  | { readonly capped: true }

export const DeliveryStoreSql = Layer.effect(DeliveryStore, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const sliced = yield* ImportSlices
  // Deliveries of an import not yet published are not due (HeldRows.ts).
  const heldOut = sql.literal(andShownDelivery(sliced, "d"))
  const secrets = yield* WebhookSecrets

  // Per subscription with waiting deliveries (found by skipping through webhook_deliveries_hook_due
  // one subscription at a time): its free places (perSubscription less its live leases), filled
  // with its first due deliveries; of those, the first `limit` that no other relay has locked,
  // taken chambers in turn (fair): every chamber's first, then every chamber's second, and so on,
  // by due time within a turn. Within a chamber, its subscriptions are taken in turn the same way.
  // A chamber gets at most `perChamber` less its sends already in flight in this relay, so one
  // chamber's receivers that never answer hold at most that share of the relay's sends. A
  // receiver (migration 0019: a chamber's host and port, over all its subscriptions to it) whose
  // last PROBE_AFTER_TIMEOUTS attempts or more timed out gets one place across all relays, less its
  // live leases: one probe at a time until an attempt succeeds. A claim thus reads a few rows per
  // subscription, not every waiting delivery; the caps are counted over those rows.
  //
  // A lease is live until it expires, unless the relay holding it has died: a relay on PostgreSQL
  // holds a session lock while it runs (`hold`), so when this statement can take that lock the
  // relay is gone (killed, or cut off from the database) and its leases count as expired at once.
  // Taking it is how this statement tells, and it is held only until this statement ends. A relay
  // without a registered lock (PGlite, or one from before) is judged by its leases alone. A relay
  // whose own lock is free claims nothing: others may already count its leases as expired.
  //
  // Order (ruling 32, migrations 0016 and 0017): a delivery held behind an earlier one of its
  // subscription and resource is not in that index at all, however many wait. Writers hold every
  // delivery but the first pending one of its subscription and resource, so a free delivery is
  // the one to go, and is due without looking at the others: unless a replay or a recovery queued
  // one again (`queued_at`) that is still pending, which may leave two free. For the few
  // subscriptions with such a delivery (one probe each, `requeued`), a free one is due only when
  // no earlier delivery of its subscription and resource is pending (one queued again goes before
  // the later ones still waiting) and none of them is leased (a replayed one waits for a later one
  // in flight): two index probes on (subscription, resource), each stopping at the first row.
  // They are scalar subqueries, which the planner cannot turn into joins: as NOT EXISTS, with
  // statistics from before a burst, it joined them on the subscription alone and read every
  // waiting delivery of it for each candidate. Each is written `IS DISTINCT FROM 1`, which the
  // planner expects nearly every row to pass, as nearly every row does: as `IS NULL`, which it
  // expects almost no row to pass, with statistics that know of a backlog it read and sorted every
  // waiting delivery of each subscription to find the few it needed. Where nothing was queued
  // again they are not run at all: under a burst each read the index entries that the resource's
  // settled deliveries leave until a vacuum.
  // Rows found in one step are read again by id (`= ANY`), one index probe each, never by a join
  // that the planner may make a scan of the table. The steps are materialized so that each runs
  // once whatever the planner believes of the table's size (its statistics may date from before a
  // burst, when few deliveries waited, or know of a backlog). The rows leased, and one more row
  // (`capped`) when due deliveries were left for want of a place (of their subscription, their
  // receiver or their chamber).
  const claim = (o: ClaimOptions) => {
    const sending = [...(o.sending ?? new Map<number, number>())].filter(([, n]) => n > 0)
    return sql<ClaimRow>`
      WITH RECURSIVE waiting AS (
        (SELECT hook_id FROM webhook_deliveries WHERE status = 'pending' AND NOT held ORDER BY hook_id LIMIT 1)
        UNION ALL
        SELECT (SELECT d.hook_id FROM webhook_deliveries d WHERE d.status = 'pending' AND NOT d.held AND d.hook_id > w.hook_id ORDER BY d.hook_id LIMIT 1)
        FROM waiting w WHERE w.hook_id IS NOT NULL
      ), gone AS MATERIALIZED (
        -- The relays whose lock is free: their leases count as expired.
        SELECT coalesce(array_agg(relay_id), '{}') AS ids FROM webhook_relays WHERE pg_try_advisory_xact_lock(${RELAY_LOCK}, id)
      ), room AS MATERIALIZED (
        SELECT w.hook_id, s.tenant_id, webhook_origin(s.url) AS origin, (
          SELECT count(*) FROM webhook_deliveries b WHERE b.hook_id = w.hook_id AND b.status = 'pending' AND b.lease_expires_at > now()
            AND b.leased_by <> ALL((SELECT ids FROM gone)::text[])
        ) AS leased, (
          SELECT 1 FROM webhook_deliveries q WHERE q.hook_id = w.hook_id AND q.status = 'pending' AND q.queued_at IS NOT NULL LIMIT 1
        ) IS NOT DISTINCT FROM 1 AS requeued
        FROM waiting w JOIN webhook_subscriptions s ON s.id = w.hook_id AND s.active
      ), limits AS MATERIALIZED (
        -- A subscription's free places; a receiver timing out: its one place less its live leases (probes), else no cap (null).
        SELECT r.hook_id, r.tenant_id, r.origin, r.requeued, ${o.perSubscription} - r.leased AS places,
          CASE WHEN t.timeouts >= ${PROBE_AFTER_TIMEOUTS} THEN 1 - sum(r.leased) OVER (PARTITION BY r.tenant_id, r.origin) END AS probes
        FROM room r LEFT JOIN webhook_receivers t ON t.tenant_id = r.tenant_id AND t.origin = r.origin
      ), due AS MATERIALIZED (
        -- One row past the places, to know whether any are left for want of a place.
        SELECT c.id, c.attempt_count, c.next_attempt_at, c.place, r.tenant_id, r.origin, r.probes, c.place > greatest(r.places, 0) AS beyond
        FROM limits r CROSS JOIN LATERAL (
          SELECT d.id, d.attempt_count, d.next_attempt_at, row_number() OVER (ORDER BY d.next_attempt_at, d.id) AS place FROM webhook_deliveries d
          WHERE d.hook_id = r.hook_id AND d.status = 'pending' AND NOT d.held AND d.next_attempt_at <= now()${heldOut}
            AND (d.lease_expires_at IS NULL OR d.lease_expires_at <= now() OR d.leased_by = ANY((SELECT ids FROM gone)::text[]))
            -- Evaluated left to right: the probes only where something was queued again.
            AND (NOT r.requeued OR ((
              SELECT 1 FROM webhook_deliveries p
              WHERE p.hook_id = d.hook_id AND p.resource = d.resource AND p.status = 'pending' AND p.event_id < d.event_id LIMIT 1
            ) IS DISTINCT FROM 1 AND (
              SELECT 1 FROM webhook_deliveries p
              WHERE p.hook_id = d.hook_id AND p.resource = d.resource AND p.status = 'pending' AND p.lease_expires_at > now()
                AND p.leased_by <> ALL((SELECT ids FROM gone)::text[]) AND p.id <> d.id LIMIT 1
            ) IS DISTINCT FROM 1))
          ORDER BY d.next_attempt_at, d.id LIMIT greatest(r.places, 0) + 1
        ) c
      ), fair AS MATERIALIZED (
        -- Within its subscription's places (beyond), its receiver's probes (go), then its chamber's share, in turns.
        SELECT x.id, x.attempt_count, x.turn, x.go AND x.turn <= ${o.perChamber ?? o.limit} - coalesce(s.sending, 0) AS go
        FROM (
          SELECT y.*, row_number() OVER (PARTITION BY y.tenant_id, y.go ORDER BY y.place, y.next_attempt_at, y.id) AS turn
          FROM (
            SELECT d.*, NOT d.beyond AND (d.probes IS NULL OR row_number() OVER (
              PARTITION BY d.tenant_id, d.origin, d.beyond ORDER BY d.place, d.next_attempt_at, d.id
            ) <= d.probes) AS go
            FROM due d
          ) y
        ) x LEFT JOIN unnest(${`{${sending.map(([t]) => t).join(",")}}`}::bigint[], ${`{${sending.map(([, n]) => n).join(",")}}`}::integer[])
          AS s(tenant_id, sending) ON s.tenant_id = x.tenant_id
      ), picked AS (
        -- Locked here, in turns, skipping what another relay is claiming: two relays claiming
        -- at once take different deliveries. Checked again on the row itself, as it is once locked:
        -- still without a live lease and with no attempt recorded since this statement's snapshot,
        -- so a delivery another relay leased, or even sent and settled, meanwhile is skipped, never
        -- leased twice. (Not by its status: that would let the planner read every waiting delivery
        -- through the partial indexes, which its statistics may say are nearly empty.) NO KEY: a
        -- writer queueing a delivery behind this one holds it FOR KEY SHARE, which only settling waits for.
        SELECT d.id FROM fair f JOIN webhook_deliveries d ON d.id = f.id AND d.attempt_count = f.attempt_count
        WHERE d.id = ANY(ARRAY(SELECT id FROM fair WHERE go)) AND f.go
          AND (d.lease_expires_at IS NULL OR d.lease_expires_at <= now() OR d.leased_by = ANY((SELECT ids FROM gone)::text[]))
          AND NOT ${o.relayId} = ANY((SELECT ids FROM gone)::text[])
        ORDER BY f.turn, d.next_attempt_at, d.id
        LIMIT ${o.limit}
        FOR NO KEY UPDATE OF d SKIP LOCKED
      ), leased AS (
        UPDATE webhook_deliveries d
        SET lease_expires_at = now() + ${o.leaseMs} * interval '1 millisecond', leased_by = ${o.relayId}
        FROM picked, outbox_events e, webhook_subscriptions s
        WHERE d.id = picked.id AND e.id = d.event_id AND s.id = d.hook_id
        RETURNING d.id::text, d.tenant_id::text, d.hook_id::text, s.url, s.secret, d.attempt_count,
          e.event_id, e.type, ${sql.literal(isoColumn("e.created_at"))} AS created_at, e.payload
      )
      SELECT false AS capped, * FROM leased
      UNION ALL
      -- One more row when due deliveries are left for want of a place.
      SELECT true, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL WHERE EXISTS (SELECT 1 FROM fair WHERE NOT go)`.pipe(
      Effect.map((rows): Claimed => ({
        deliveries: rows.flatMap((r): Array<ClaimedDelivery> =>
          r.capped ? [] : [{
            id: Number(r.id),
            tenantId: Number(r.tenant_id),
            hookId: Number(r.hook_id),
            url: r.url,
            secret: secrets.open(r.secret),
            attemptCount: r.attempt_count,
            event: { id: r.event_id, tenant_id: Number(r.tenant_id), type: r.type, created_at: r.created_at, data: r.payload }
          }]
        ),
        capped: rows.some((r) => r.capped)
      })),
      Effect.orDie
    )
  }

  // One statement, so one round trip and one transaction: the attempts, each delivery settled
  // (unless another relay has claimed it since: its attempt is kept, the delivery left alone), and
  // the counts of the subscriptions of the deliveries settled. A delivery deleted meanwhile (with
  // its subscription) gets no attempt; its id is returned. One deleted while this statement runs
  // makes it fail on the attempt's foreign key, refused: the relay then writes the outcomes one by
  // one, and that one is found gone.
  const record = (
    relayId: string,
    outcomes: ReadonlyArray<AttemptOutcome>,
    retryDelayMs: (retryIndex: number, retryAfterSeconds: number | null) => number
  ): Effect.Effect<Recorded, OutcomesRefused> => {
    if (outcomes.length === 0) return Effect.succeed({ vanished: [], freed: false })
    const batch = outcomes.map((o, n) => {
      const attempts = o.delivery.attemptCount + 1
      // Succeeded, pending again (a retry is left), or failed.
      const state = o.ok ? "succeeded" : attempts <= RETRIES_PER_DELIVERY ? "pending" : "failed"
      // Counted from the attempt's end, when its answer (and any Retry-After) arrived.
      const ended = o.attemptedAt.getTime() + o.latencyMs
      const next = state === "pending" ? new Date(ended + retryDelayMs(attempts - 1, o.retryAfterSeconds)).toISOString() : null
      return {
        n,
        id: o.delivery.id,
        tenant: o.delivery.tenantId,
        hook: o.delivery.hookId,
        state,
        attempts,
        next,
        attempted_at: o.attemptedAt.toISOString(),
        status: o.status,
        latency: Math.round(o.latencyMs),
        excerpt: storable(o.responseExcerpt),
        error: storable(o.error),
        timed_out: o.timedOut === true
      }
    })
    // Per subscription, in the order its deliveries settled: a success resets the count, a failed
    // delivery adds one; at DEACTIVATE_AT it is inactive, the last failure time kept. The
    // subscriptions whose counts change are locked for update in id order: relays recording at
    // once wait for each other instead of deadlocking. Only those the batch changes: a success for a subscription without
    // failures whose last success is less than a second older changes nothing worth a write, so
    // under load its row is written about once a second, not once per batch of every relay.
    // The deliveries still leased here are locked FOR UPDATE first, in (subscription, id) order: a
    // writer queueing a delivery behind one of them (pg-adapter OutboxSql.ts) holds it FOR KEY
    // SHARE and is waited for, so the trigger that lets the next one go (migrations 0016 and 0018)
    // sees the delivery it queued, and this statement the mark (`followed`) it left. The one more
    // row, `freed`, says whether a delivery settled had a later one of its subscription and
    // resource queued behind it. The batch's deliveries are read by id (`= ANY`): as `IN`, with
    // statistics that know of a backlog, the planner scanned the table.
    // Per chamber and receiver (webhook_origin), in the order the attempts ended: a success resets
    // its timeouts (its row deleted), each timeout after the last success adds one. Only receivers
    // with a timeout in the batch, or of a chamber with a receiver timing out, are looked at: a
    // batch of successes to receivers that answer writes nothing here. The rows it changes are
    // locked first, in (chamber, receiver) order, and new ones inserted in that order, so relays
    // writing at once wait for each other instead of deadlocking.
    return sql<{ readonly id: string | null; readonly freed: boolean }>`
      WITH v AS MATERIALIZED (
        SELECT * FROM jsonb_to_recordset(${JSON.stringify(batch)}::jsonb) AS v(n integer, id bigint, tenant bigint, hook bigint, state text,
          attempts integer, next text, attempted_at text, status integer, latency integer, excerpt text, error text, timed_out boolean)
      ), present AS MATERIALIZED (
        SELECT d.id FROM webhook_deliveries d WHERE d.id = ANY(ARRAY(SELECT id FROM v))
      ), mine AS MATERIALIZED (
        SELECT d.id, d.followed FROM webhook_deliveries d
        WHERE d.id = ANY(ARRAY(SELECT id FROM v)) AND d.leased_by = ${relayId}
        ORDER BY d.hook_id, d.id FOR UPDATE OF d
      ), attempt AS (
        INSERT INTO webhook_attempts (tenant_id, delivery_id, attempted_at, status, latency_ms, response_excerpt, error)
        SELECT v.tenant, v.id, v.attempted_at::timestamptz, v.status, v.latency, v.excerpt, v.error FROM v JOIN present p ON p.id = v.id ORDER BY v.n
      ), settled AS (
        UPDATE webhook_deliveries d
        SET status = v.state, attempt_count = v.attempts, lease_expires_at = NULL, leased_by = NULL,
            next_attempt_at = coalesce(v.next::timestamptz, d.next_attempt_at),
            settled_at = CASE WHEN v.state = 'pending' THEN NULL ELSE now() END
        FROM v JOIN mine ON mine.id = v.id WHERE d.id = v.id AND d.leased_by = ${relayId}
        RETURNING d.id
      ), done AS (
        SELECT v.hook, v.n, v.state, v.attempted_at::timestamptz AS at,
          max(v.n) FILTER (WHERE v.state = 'succeeded') OVER (PARTITION BY v.hook) AS last_success
        FROM v JOIN settled ON settled.id = v.id WHERE v.state <> 'pending'
      ), counts AS (
        SELECT hook AS id, bool_or(state = 'succeeded') AS reset,
          count(*) FILTER (WHERE state = 'failed' AND n > coalesce(last_success, -1))::integer AS failures,
          max(at) FILTER (WHERE state = 'succeeded') AS success, max(at) FILTER (WHERE state = 'failed') AS failure
        FROM done GROUP BY hook
      ), locked AS MATERIALIZED (
        SELECT h.id FROM webhook_subscriptions h JOIN counts c ON c.id = h.id
        WHERE c.failures > 0 OR (c.reset AND h.failure_count <> 0) OR h.last_success_at IS NULL OR h.last_success_at < c.success - interval '1 second'
        ORDER BY h.id FOR NO KEY UPDATE OF h
      ), counted AS (
        UPDATE webhook_subscriptions h
        SET failure_count = CASE WHEN c.reset THEN 0 ELSE h.failure_count END + c.failures,
            active = h.active AND (CASE WHEN c.reset THEN 0 ELSE h.failure_count END + c.failures) < ${DEACTIVATE_AFTER},
            last_success_at = coalesce(c.success, h.last_success_at),
            last_failure_at = coalesce(c.failure, h.last_failure_at),
            updated_at = now()
        FROM counts c, locked
        WHERE h.id = c.id AND locked.id = c.id
      ), probed AS MATERIALIZED (
        SELECT x.tenant, x.origin, bool_or(x.ok) AS reset,
          count(*) FILTER (WHERE x.timed_out AND x.n > coalesce(x.last_ok, -1))::integer AS timeouts,
          max(x.at) FILTER (WHERE x.timed_out) AS timed_out_at
        FROM (
          SELECT a.*, max(a.n) FILTER (WHERE a.ok) OVER (PARTITION BY a.tenant, a.origin) AS last_ok FROM (
            SELECT v.tenant, webhook_origin(s.url) AS origin, v.n, v.state = 'succeeded' AS ok, v.timed_out, v.attempted_at::timestamptz AS at
            FROM v JOIN webhook_subscriptions s ON s.id = v.hook
            WHERE v.timed_out OR (v.state = 'succeeded' AND (
              EXISTS (SELECT 1 FROM webhook_receivers r WHERE r.tenant_id = v.tenant) OR EXISTS (SELECT 1 FROM v t WHERE t.tenant = v.tenant AND t.timed_out)
            ))
          ) a
        ) x GROUP BY x.tenant, x.origin
      ), held AS MATERIALIZED (
        SELECT r.tenant_id, r.origin FROM webhook_receivers r JOIN probed p ON p.tenant = r.tenant_id AND p.origin = r.origin
        ORDER BY r.tenant_id, r.origin FOR UPDATE OF r
      ), healed AS (
        DELETE FROM webhook_receivers r USING probed p, held h
        WHERE p.reset AND p.timeouts = 0 AND r.tenant_id = p.tenant AND r.origin = p.origin AND h.tenant_id = p.tenant AND h.origin = p.origin
      ), timing_out AS (
        INSERT INTO webhook_receivers AS r (tenant_id, origin, timeouts, last_timeout_at)
        SELECT p.tenant, p.origin, p.timeouts, p.timed_out_at FROM probed p CROSS JOIN (SELECT count(*) FROM held) l
        WHERE p.timeouts > 0 ORDER BY p.tenant, p.origin
        ON CONFLICT (tenant_id, origin) DO UPDATE SET
          timeouts = CASE WHEN (SELECT p.reset FROM probed p WHERE p.tenant = excluded.tenant_id AND p.origin = excluded.origin)
            THEN excluded.timeouts ELSE r.timeouts + excluded.timeouts END,
          last_timeout_at = greatest(r.last_timeout_at, excluded.last_timeout_at)
      )
      SELECT v.id::text AS id, false AS freed FROM v LEFT JOIN present p ON p.id = v.id WHERE p.id IS NULL
      UNION ALL
      SELECT NULL, true WHERE EXISTS (SELECT 1 FROM v JOIN mine m ON m.id = v.id WHERE v.state <> 'pending' AND m.followed)`.pipe(
      Effect.map((rows): Recorded => ({
        vanished: rows.flatMap((r) => (r.freed || r.id === null ? [] : [Number(r.id)])),
        freed: rows.some((r) => r.freed)
      })),
      Effect.catchTag("SqlError", (error) =>
        refused(error) ? Effect.fail(new OutcomesRefused({ reason: (error.reason.cause as Error | undefined)?.message ?? error.message })) : Effect.die(error))
    )
  }

  const renew = (relayId: string, ids: ReadonlyArray<number>, leaseMs: number) =>
    ids.length === 0 ? Effect.void : sql`
      UPDATE webhook_deliveries SET lease_expires_at = now() + ${leaseMs} * interval '1 millisecond'
      WHERE id = ANY(${`{${ids.join(",")}}`}::bigint[]) AND leased_by = ${relayId} AND status = 'pending'`.pipe(Effect.asVoid, Effect.orDie)

  const release = (relayId: string) =>
    sql`WITH unregistered AS (DELETE FROM webhook_relays WHERE relay_id = ${relayId})
        UPDATE webhook_deliveries SET lease_expires_at = NULL, leased_by = NULL
        WHERE leased_by = ${relayId} AND status = 'pending' RETURNING id`.pipe(Effect.map((rows) => rows.length), Effect.orDie)

  // The lock is taken on a connection reserved for it (out of the pool: no other statement runs
  // there, so it is held by this relay alone), after the relay's row exists; it is given back
  // before the connection returns to the pool.
  const lost = (error: SqlError) => new RelayPresenceLost({ reason: error.message })
  const hold = (relayId: string) =>
    Effect.gen(function*() {
      const connection = yield* sql.reserve
      const [row] = yield* connection.execute(
        `INSERT INTO webhook_relays (relay_id) VALUES ($1) ON CONFLICT (relay_id) DO UPDATE SET relay_id = excluded.relay_id RETURNING id`,
        [relayId],
        undefined
      )
      yield* connection.execute(`SELECT pg_advisory_lock($1, $2)`, [RELAY_LOCK, (row as { readonly id: number }).id], undefined)
      yield* Effect.addFinalizer(() => connection.execute(`SELECT pg_advisory_unlock_all()`, [], undefined).pipe(Effect.ignore))
      return Effect.asVoid(connection.execute(`SELECT 1`, [], undefined)).pipe(Effect.mapError(lost))
    }).pipe(Effect.mapError(lost))

  // A relay's row is deleted once it has died holding no live lease (its leases then need no
  // judging; the leased deliveries are read through their partial index, never the table); a
  // receiver's once it has not timed out for the retention.
  const prune = (retentionMs: number, batch: number) =>
    sql`WITH receivers AS (
          DELETE FROM webhook_receivers WHERE last_timeout_at < now() - ${retentionMs} * interval '1 millisecond'
        ), relays AS (
          DELETE FROM webhook_relays r WHERE (
            SELECT 1 FROM webhook_deliveries d
            WHERE d.status = 'pending' AND d.lease_expires_at IS NOT NULL AND d.lease_expires_at > now() AND d.leased_by = r.relay_id LIMIT 1
          ) IS DISTINCT FROM 1 AND pg_try_advisory_xact_lock(${RELAY_LOCK}, r.id)
        )
        DELETE FROM webhook_deliveries WHERE id IN (
          SELECT id FROM webhook_deliveries
          WHERE status <> 'pending' AND settled_at < now() - ${retentionMs} * interval '1 millisecond'
          ORDER BY settled_at LIMIT ${batch})
        RETURNING id`.pipe(Effect.map((rows) => rows.length), Effect.orDie)

  return DeliveryStore.of({ claim, record, renew, release, hold, prune })
}))
