/** Webhook subscriptions in SQL, every statement scoped by tenant. */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import { type Hook, type HookCounts, HookRepo, type HookSigning } from "@chamber/core"
import { isoColumn } from "./IsoColumn.ts"

interface HookRow {
  readonly id: bigint | number
  readonly url: string
  readonly events: ReadonlyArray<string>
  readonly active: boolean
  readonly created_at: string | null
}

const COLUMNS = `h.id, h.url, h.events, h.active, ${isoColumn("h.created_at")} AS created_at`

const toHook = (r: HookRow): Hook => ({ id: Number(r.id), url: r.url, events: r.events, active: r.active, created_at: r.created_at })

interface CountsRow extends HookRow {
  readonly failure_count: number
  readonly last_success_at: string | null
  readonly last_failure_at: string | null
}

const COUNTS = `${COLUMNS}, h.failure_count, ${isoColumn("h.last_success_at")} AS last_success_at, ${isoColumn("h.last_failure_at")} AS last_failure_at`

export const HookRepoSql = Layer.effect(HookRepo, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return HookRepo.of({
    list: (tenantId) =>
      sql<HookRow>`SELECT ${sql.literal(COLUMNS)} FROM webhook_subscriptions h WHERE h.tenant_id = ${tenantId} ORDER BY h.id`.pipe(
        Effect.map((rows) => rows.map(toHook)),
        Effect.orDie
      ),
    // One statement, so two concurrent posts of one URL make one subscription.
    upsert: (tenantId, url, events, sealedSecret) =>
      sql<HookRow & { readonly secret: string; readonly created: boolean }>`
        INSERT INTO webhook_subscriptions AS h (tenant_id, url, events, secret)
        VALUES (${tenantId}, ${url}, ${JSON.stringify(events)}::jsonb, ${sealedSecret})
        ON CONFLICT (tenant_id, url) DO UPDATE
          SET events = EXCLUDED.events, active = true, failure_count = 0, updated_at = now()
        RETURNING ${sql.literal(COLUMNS)}, h.secret, (h.xmax = 0) AS created`.pipe(
        Effect.map((rows) => ({ hook: toHook(rows[0]!), sealedSecret: rows[0]!.secret, created: rows[0]!.created })),
        Effect.orDie
      ),
    delete: (tenantId, id) =>
      sql`DELETE FROM webhook_subscriptions WHERE tenant_id = ${tenantId} AND id = ${id} RETURNING id`.pipe(
        Effect.map((rows) => rows.length > 0),
        Effect.orDie
      ),
    counts: (tenantId, id) =>
      sql<CountsRow>`SELECT ${sql.literal(COUNTS)} FROM webhook_subscriptions h WHERE h.tenant_id = ${tenantId} AND h.id = ${id}`.pipe(
        Effect.map((rows): HookCounts | undefined => {
          const r = rows[0]
          return r === undefined
            ? undefined
            : { ...toHook(r), failure_count: r.failure_count, last_success_at: r.last_success_at, last_failure_at: r.last_failure_at }
        }),
        Effect.orDie
      ),
    signing: (tenantId, id) =>
      sql<{ readonly url: string; readonly secret: string; readonly previous: string | null }>`
        SELECT url, secret, CASE WHEN previous_expires_at > now() THEN previous_secret END AS previous
        FROM webhook_subscriptions WHERE tenant_id = ${tenantId} AND id = ${id}`.pipe(
        Effect.map((rows): HookSigning | undefined => {
          const r = rows[0]
          return r === undefined ? undefined : { url: r.url, sealedSecret: r.secret, sealedPrevious: r.previous }
        }),
        Effect.orDie
      ),
    // The secret being replaced becomes the previous one, whatever the previous one was: rotating
    // again ends the older one at once.
    rotate: (tenantId, id, sealedSecret, previousExpiresIn) =>
      sql<{ readonly previous_expires_at: string }>`
        UPDATE webhook_subscriptions h
        SET previous_secret = h.secret, secret = ${sealedSecret},
          previous_expires_at = now() + ${previousExpiresIn} * interval '1 second', updated_at = now()
        WHERE h.tenant_id = ${tenantId} AND h.id = ${id}
        RETURNING ${sql.literal(isoColumn("h.previous_expires_at"))} AS previous_expires_at`.pipe(
        Effect.map((rows) => rows[0]?.previous_expires_at),
        Effect.orDie
      )
  })
}))
