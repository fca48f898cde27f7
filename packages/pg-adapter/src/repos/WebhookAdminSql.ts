/**
 * What an operator sees and does with webhooks, over SQL (core `WebhookAdmin`, docs/cli.md
 * "Webhooks").
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import type * as Statement from "effect/sql/Statement"
import {
  type Backlog,
  type DeliveryFilter,
  type DeliveryView,
  failuresBeforeDeactivation,
  type HookView,
  type RecentAttempts,
  type SubscriptionBacklog,
  WebhookAdmin
} from "@chamber/core"
import { isoColumn as ISO } from "./IsoColumn.ts"
import { ImportSlices, shownDelivery } from "./HeldRows.ts"

const HOOK_COLUMNS = `h.id::int AS id, t.public_id AS tenant, h.url, h.events, h.active, h.failure_count,
  ${ISO("h.last_failure_at")} AS last_failure_at, ${ISO("h.last_success_at")} AS last_success_at, ${ISO("h.created_at")} AS created_at`

export const WebhookAdminSql = Layer.effect(WebhookAdmin, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const sliced = yield* ImportSlices

  const withHealth = (h: Omit<HookView, "failures_before_deactivation">): HookView => ({
    ...h,
    failures_before_deactivation: failuresBeforeDeactivation(h.active, h.failure_count)
  })

  const hooks = (tenant: string) =>
    sql<Omit<HookView, "failures_before_deactivation">>`SELECT ${sql.literal(HOOK_COLUMNS)} FROM webhook_subscriptions h JOIN tenants t ON t.id = h.tenant_id
      WHERE t.public_id = ${tenant} ORDER BY h.id`.pipe(Effect.map((rows) => rows.map(withHealth)), Effect.orDie)

  const hook = (id: number) =>
    sql<Omit<HookView, "failures_before_deactivation">>`SELECT ${sql.literal(HOOK_COLUMNS)} FROM webhook_subscriptions h JOIN tenants t ON t.id = h.tenant_id
      WHERE h.id = ${id}`.pipe(Effect.map((rows) => (rows[0] === undefined ? undefined : withHealth(rows[0]))), Effect.orDie)

  const reactivate = (id: number) =>
    sql`UPDATE webhook_subscriptions SET active = true, failure_count = 0, updated_at = now() WHERE id = ${id} RETURNING id`.pipe(
      Effect.map((rows) => rows.length > 0),
      Effect.orDie
    )

  const deliveries = (f: DeliveryFilter) => {
    const clauses = [sql`true`]
    if (sliced) clauses.push(sql`${sql.literal(shownDelivery(true, "d"))}`)
    if (f.tenant !== undefined) clauses.push(sql`d.tenant_id = (SELECT id FROM tenants WHERE public_id = ${f.tenant})`)
    if (f.hookId !== undefined) clauses.push(sql`d.hook_id = ${f.hookId}`)
    if (f.status !== undefined) clauses.push(sql`d.status = ${f.status}`)
    if (f.since !== undefined) clauses.push(sql`d.created_at >= ${f.since}::timestamptz`)
    if (f.ids !== undefined) clauses.push(f.ids.length === 0 ? sql`false` : sql`d.id IN ${sql.in(f.ids)}`)
    return sql<DeliveryView>`
      SELECT d.id::int AS id, d.hook_id::int AS hook_id, s.url, e.event_id, e.type, d.status, d.attempt_count,
        CASE WHEN d.status = 'pending' THEN ${sql.literal(ISO("d.next_attempt_at"))} END AS next_attempt_at,
        ${sql.literal(ISO("d.created_at"))} AS created_at,
        coalesce((SELECT jsonb_agg(jsonb_build_object(
            'attempted_at', ${sql.literal(ISO("a.attempted_at"))}, 'status', a.status, 'latency_ms', a.latency_ms,
            'response_excerpt', a.response_excerpt, 'error', a.error) ORDER BY a.id)
          FROM webhook_attempts a WHERE a.delivery_id = d.id), '[]'::jsonb) AS attempts
      FROM webhook_deliveries d
      JOIN webhook_subscriptions s ON s.id = d.hook_id
      JOIN outbox_events e ON e.id = d.event_id
      WHERE ${sql.and(clauses)}
      ORDER BY d.id DESC LIMIT ${f.limit ?? 100}`.pipe(Effect.orDie)
  }

  // Bounded by the newest deliveries (index webhook_deliveries_hook), never a scan of every attempt.
  const recentAttempts = (tenant: string, count: number) =>
    sql<RecentAttempts>`
      SELECT h.id::int AS hook_id, coalesce((
        SELECT jsonb_agg(r.ok ORDER BY r.id) FROM (
          SELECT a.id, (a.status BETWEEN 200 AND 299 AND a.error IS NULL) AS ok
          FROM (SELECT d.id FROM webhook_deliveries d WHERE d.tenant_id = h.tenant_id AND d.hook_id = h.id
                ORDER BY d.id DESC LIMIT ${count}) d
          JOIN webhook_attempts a ON a.delivery_id = d.id
          ORDER BY a.id DESC LIMIT ${count}) r), '[]'::jsonb) AS ok
      FROM webhook_subscriptions h JOIN tenants t ON t.id = h.tenant_id
      WHERE t.public_id = ${tenant} ORDER BY h.id`.pipe(Effect.orDie)

  const replay = (ids: ReadonlyArray<number>) =>
    ids.length === 0 ? Effect.succeed([]) : sql<{ readonly id: number }>`
      UPDATE webhook_deliveries SET status = 'pending', attempt_count = 0, next_attempt_at = now(), queued_at = now(),
        lease_expires_at = NULL, leased_by = NULL, settled_at = NULL
      WHERE id IN ${sql.in(ids)} AND status <> 'pending'
      RETURNING id::int AS id`.pipe(Effect.map((rows) => rows.map((r) => r.id)), Effect.orDie)

  // Per subscription, from its pending rows only (the partial indexes on status = 'pending',
  // led by hook_id): settled deliveries are never read. The whole database's figures and a
  // tenant's rows are this one statement, summed or listed.
  const perSubscription = (where: Statement.Fragment) => sql`
    SELECT h.id::int AS id, h.url, h.active, h.failure_count, coalesce(p.due, 0)::int AS due,
      coalesce(p.oldest, 0)::float8 AS oldest_due_seconds, coalesce(p.held, 0)::int AS held, coalesce(p.later, 0)::int AS later
    FROM webhook_subscriptions h
    LEFT JOIN LATERAL (
      SELECT count(*) FILTER (WHERE d.next_attempt_at <= now()) AS due,
        greatest(0, extract(epoch FROM now() - min(d.next_attempt_at) FILTER (WHERE d.next_attempt_at <= now()))) AS oldest,
        count(*) FILTER (WHERE d.held) AS held,
        count(*) FILTER (WHERE d.next_attempt_at > now()) AS later
      FROM webhook_deliveries d WHERE d.hook_id = h.id AND d.status = 'pending'
    ) p ON true
    WHERE ${where}`

  const backlog = sql<{ readonly due: string; readonly oldest: number; readonly held: string; readonly active: string; readonly inactive: string }>`
    SELECT coalesce(sum(s.due), 0) AS due, coalesce(max(s.oldest_due_seconds), 0)::float8 AS oldest, coalesce(sum(s.held), 0) AS held,
      count(*) FILTER (WHERE s.active) AS active, count(*) FILTER (WHERE NOT s.active) AS inactive
    FROM (${perSubscription(sql`true`)}) s`.pipe(
    Effect.map(([row]): Backlog => ({
      due: Number(row!.due),
      oldest_due_seconds: Number(row!.oldest),
      held: Number(row!.held),
      active_subscriptions: Number(row!.active),
      inactive_subscriptions: Number(row!.inactive)
    })),
    Effect.orDie
  )

  const backlogOf = (tenant: string) =>
    sql<SubscriptionBacklog>`SELECT * FROM (${perSubscription(sql`h.tenant_id = (SELECT id FROM tenants WHERE public_id = ${tenant})`)}) s
      ORDER BY s.oldest_due_seconds DESC, s.due DESC, s.held DESC, s.id`.pipe(
      Effect.map((rows) => rows.map((r) => ({ ...r, oldest_due_seconds: Number(r.oldest_due_seconds) }))),
      Effect.orDie
    )

  return WebhookAdmin.of({ hooks, hook, reactivate, deliveries, recentAttempts, replay, backlog, backlogOf })
}))
