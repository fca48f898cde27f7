/** API keys in SQL: looked up by SHA-256 hash only; the plaintext is never stored. */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import { type ApiKey, ApiKeyRepo, type KeyContext, type Scope } from "@chamber/core"
import { type Int8, iso } from "./rows.ts"

interface KeyRow {
  readonly id: Int8
  readonly tenant_id: Int8
  readonly name: string
  readonly prefix: string
  readonly scopes: ReadonlyArray<Scope>
  readonly daily_limit: number
  readonly created_by: Int8 | null
  readonly created_at: Date
  readonly last_used_at: Date | null
  readonly revoked_at: Date | null
}

/** A live key with its chamber, as authentication reads it. */
export type KeyContextRow = Pick<KeyRow, "id" | "tenant_id" | "name" | "prefix" | "scopes" | "daily_limit"> & {
  readonly chamber_id: string
  readonly chamber_name: string
  readonly chamber_website: string | null
}

/** The columns of a `KeyContextRow`, from `api_keys k JOIN tenants t`. */
export const KEY_CONTEXT_COLUMNS = `k.id, k.tenant_id, k.name, k.prefix, k.scopes, k.daily_limit,
  t.public_id AS chamber_id, t.name AS chamber_name, t.website AS chamber_website`

export const keyContextOf = (r: KeyContextRow): KeyContext => ({
  keyId: Number(r.id),
  tenantId: Number(r.tenant_id),
  name: r.name,
  prefix: r.prefix,
  scopes: r.scopes,
  dailyLimit: r.daily_limit,
  chamber: { id: r.chamber_id, name: r.chamber_name, website: r.chamber_website }
})

const KEY_COLUMNS = "id, tenant_id, name, prefix, scopes, daily_limit, created_by, created_at, last_used_at, revoked_at"

const toKey = (r: KeyRow): ApiKey => ({
  ...r,
  id: Number(r.id),
  tenant_id: Number(r.tenant_id),
  created_by: r.created_by === null ? null : Number(r.created_by),
  created_at: r.created_at.toISOString(),
  last_used_at: iso(r.last_used_at),
  revoked_at: iso(r.revoked_at)
})

export const ApiKeyRepoSql = Layer.effect(ApiKeyRepo, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  return ApiKeyRepo.of({
    insert: (k) =>
      sql<KeyRow>`INSERT INTO api_keys (tenant_id, name, prefix, key_hash, scopes, daily_limit, created_by)
          VALUES (${k.tenant_id}, ${k.name}, ${k.prefix}, ${k.key_hash}, ${JSON.stringify(k.scopes)}::jsonb, ${k.daily_limit}, ${k.created_by})
          RETURNING ${sql.literal(KEY_COLUMNS)}`.pipe(Effect.map((rows) => toKey(rows[0]!)), Effect.orDie),
    findActiveByHash: (hash) =>
      sql<KeyContextRow>`SELECT ${sql.literal(KEY_CONTEXT_COLUMNS)}
         FROM api_keys k JOIN tenants t ON t.id = k.tenant_id
         WHERE k.key_hash = ${hash} AND k.revoked_at IS NULL`.pipe(
        Effect.map((rows) => rows[0] === undefined ? undefined : keyContextOf(rows[0])),
        Effect.orDie
      ),
    list: (tenantId) =>
      sql<KeyRow>`SELECT ${sql.literal(KEY_COLUMNS)} FROM api_keys WHERE tenant_id = ${tenantId} ORDER BY id`.pipe(
        Effect.map((rows) => rows.map(toKey)),
        Effect.orDie
      ),
    revokeByPrefix: (prefix) =>
      sql<KeyRow>`UPDATE api_keys SET revoked_at = now() WHERE prefix = ${prefix} AND revoked_at IS NULL RETURNING ${sql.literal(KEY_COLUMNS)}`.pipe(
        Effect.map((rows) => rows.map(toKey)),
        Effect.orDie
      ),
    findLiveByPrefix: (prefix) =>
      sql<KeyRow>`SELECT ${sql.literal(KEY_COLUMNS)} FROM api_keys WHERE prefix = ${prefix} AND revoked_at IS NULL ORDER BY id`.pipe(
        Effect.map((rows) => rows.map(toKey)),
        Effect.orDie
      ),
    setDailyLimit: (prefix, dailyLimit) =>
      sql<KeyRow>`UPDATE api_keys SET daily_limit = ${dailyLimit} WHERE prefix = ${prefix} AND revoked_at IS NULL RETURNING ${sql.literal(KEY_COLUMNS)}`.pipe(
        Effect.map((rows) => rows.map(toKey)),
        Effect.orDie
      ),
    touch: (keyId) => sql`UPDATE api_keys SET last_used_at = now() WHERE id = ${keyId}`.pipe(Effect.asVoid, Effect.orDie)
  })
}))
