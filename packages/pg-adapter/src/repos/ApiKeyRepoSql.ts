/** API keys in SQL: looked up by SHA-256 hash only; the plaintext is never stored. */
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { type ApiKey, ApiKeyRepo } from "@chamber/core"
import { iso, isoRequired, num, numOrNull } from "./rows.ts"

const toKey = (r: any): ApiKey => ({
  id: num(r.id),
  tenant_id: num(r.tenant_id),
  name: r.name,
  prefix: r.prefix,
  scopes: r.scopes,
  daily_limit: num(r.daily_limit),
  created_by: numOrNull(r.created_by),
  created_at: isoRequired(r.created_at),
  last_used_at: iso(r.last_used_at),
  revoked_at: iso(r.revoked_at)
})

export const ApiKeyRepoSql = Layer.effect(ApiKeyRepo, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  return ApiKeyRepo.of({
    insert: (k) =>
      sql`INSERT INTO api_keys (tenant_id, name, prefix, key_hash, scopes, daily_limit, created_by)
          VALUES (${k.tenant_id}, ${k.name}, ${k.prefix}, ${k.key_hash}, ${JSON.stringify(k.scopes)}::jsonb, ${k.daily_limit}, ${k.created_by})
          RETURNING *`.pipe(Effect.map((rows) => toKey(rows[0])), Effect.orDie),
    findActiveByHash: (hash) =>
      sql`SELECT k.id, k.tenant_id, k.name, k.prefix, k.scopes, k.daily_limit,
                 t.public_id AS chamber_id, t.name AS chamber_name, t.website AS chamber_website
          FROM api_keys k JOIN tenants t ON t.id = k.tenant_id
          WHERE k.key_hash = ${hash} AND k.revoked_at IS NULL`.pipe(
        Effect.map((rows) => {
          const r: any = rows[0]
          if (r === undefined) return undefined
          return {
            keyId: num(r.id),
            tenantId: num(r.tenant_id),
            name: r.name,
            prefix: r.prefix,
            scopes: r.scopes,
            dailyLimit: num(r.daily_limit),
            chamber: { id: r.chamber_id, name: r.chamber_name, website: r.chamber_website }
          }
        }),
        Effect.orDie
      ),
    list: (tenantId) =>
      sql`SELECT * FROM api_keys WHERE tenant_id = ${tenantId} ORDER BY id`.pipe(Effect.map((rows) => rows.map(toKey)), Effect.orDie),
    revokeByPrefix: (prefix) =>
      sql`UPDATE api_keys SET revoked_at = now() WHERE prefix = ${prefix} AND revoked_at IS NULL RETURNING *`.pipe(
        Effect.map((rows) => rows.map(toKey)),
        Effect.orDie
      ),
    touch: (keyId) => sql`UPDATE api_keys SET last_used_at = now() WHERE id = ${keyId}`.pipe(Effect.asVoid, Effect.orDie)
  })
}))
