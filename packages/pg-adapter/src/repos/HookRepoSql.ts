/** Webhook subscriptions in SQL, every statement scoped by tenant. */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import { type Hook, HookRepo } from "@chamber/core"
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
      )
  })
}))
