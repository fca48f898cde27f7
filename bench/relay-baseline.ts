/**
 * The relay bench's baseline (bench/README.md "Webhook relay"): one process of a plain loop over
 * `pg`. In one transaction: the due deliveries claimed (`FOR UPDATE SKIP LOCKED LIMIT batch`), each
 * POSTed at once with the product's own sender, body, signatures and secret as the product makes
 * them; the delivered ones marked in one UPDATE. No lease, cap, attempt history or retry. Woken by
 * LISTEN chamber_deliveries, else every second. Prints `BENCH_RELAY_READY`; SIGTERM stops it after its batch.
 */
import { EventEmitter, once } from "node:events"
import * as Result from "effect/Result"
import pg from "pg"
import { webhookSecrets } from "../packages/pg-adapter/src/index.ts"
import { deliveryBody, deliveryHeaders, makeSender, parseTimeout } from "../packages/webhook-relay/src/index.ts"

const url = process.env.DATABASE_URL
if (url === undefined || url === "") throw new Error("relay-baseline: DATABASE_URL is required")
const BATCH = Number(process.env.BENCH_RELAY_BASELINE_BATCH ?? 64)
const POLL_MS = 1_000
const timeoutMs = parseTimeout(process.env.CHAMBER_WEBHOOK_TIMEOUT)
const secrets = webhookSecrets(process.env.CHAMBER_SECRET_KEY)
const sender = makeSender({ allowPrivate: process.env.CHAMBER_WEBHOOK_ALLOW_PRIVATE === "true" })

// The due rows locked in due order straight off their index, then read with their event and
// subscription: a plan that stays cheap whatever the statistics say of the number waiting (the
// subscription's state a scalar subquery, which the planner cannot turn into a join, as it did EXISTS).
const CLAIM = `
  WITH picked AS ( SELECT d.id FROM webhook_deliveries d WHERE d.status = 'pending' AND d.next_attempt_at <= now()
    AND (SELECT s.active FROM webhook_subscriptions s WHERE s.id = d.hook_id) ORDER BY d.next_attempt_at, d.id LIMIT $1 FOR UPDATE SKIP LOCKED )
  SELECT d.id::text, d.tenant_id::text, s.url, s.secret, e.event_id, e.type,
    to_char(e.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at, e.payload
  FROM picked JOIN webhook_deliveries d ON d.id = picked.id JOIN outbox_events e ON e.id = d.event_id JOIN webhook_subscriptions s ON s.id = d.hook_id`
const DELIVERED = `UPDATE webhook_deliveries SET status = 'succeeded', attempt_count = attempt_count + 1, settled_at = now() WHERE id = ANY($1::bigint[])`

const db = new pg.Client({ connectionString: url })
const listener = new pg.Client({ connectionString: url })
await Promise.all([db.connect(), listener.connect()])

let [notified, stopping] = [false, false]
const wakes = new EventEmitter()
listener.on("notification", () => void (notified = true, wakes.emit("wake")))
await listener.query("LISTEN chamber_deliveries")
for (const signal of ["SIGTERM", "SIGINT"] as const) process.on(signal, () => void (stopping = true, wakes.emit("wake")))

/** Until a notification (one that came meanwhile counts), a signal or the next poll. */
const idle = async () => {
  if (!notified) await once(wakes, "wake", { signal: AbortSignal.timeout(POLL_MS) }).catch(() => {})
}

const batch = async (): Promise<number> => {
  await db.query({ name: "begin", text: "BEGIN" })
  try {
    const rows = (await db.query({ name: "claim", text: CLAIM, values: [BATCH] })).rows
    const results = await Promise.all(rows.map((r) => {
      const event = { id: r.event_id, tenant_id: Number(r.tenant_id), type: r.type, created_at: r.created_at, data: r.payload }
      const body = deliveryBody(event)
      return sender.send({ url: r.url, headers: deliveryHeaders(event, Result.getOrThrow(secrets.open(r.secret)), body, new Date()), body, timeoutMs })
    }))
    const delivered = rows.filter((_, i) => results[i]!.ok).map((r) => r.id)
    if (delivered.length > 0) await db.query({ name: "delivered", text: DELIVERED, values: [delivered] })
    await db.query({ name: "commit", text: "COMMIT" })
    return rows.length
  } catch (error) {
    await db.query("ROLLBACK").catch(() => {})
    throw error
  }
}

console.log("BENCH_RELAY_READY")
while (!stopping) {
  notified = false
  const claimed = await batch()
  if (claimed < BATCH && !stopping) await idle()
}
sender.close()
await Promise.all([db.end(), listener.end()])
