/** Idempotency-Key claims and kept answers (core idempotency/IdempotencyRepo.ts), table of migration 12. */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import { type Claim, IdempotencyRepo } from "@chamber/core"
import { KEY_CONTEXT_COLUMNS, keyContextOf, type KeyContextRow } from "./ApiKeyRepoSql.ts"

/** The key the hash names, and the Idempotency-Key's row under it as it was before the claim. */
type ClaimRow = KeyContextRow & {
  readonly mine: boolean
  readonly owner: string | null
  readonly fingerprint: string | null
  readonly status: number | null
  readonly body: Uint8Array | null
}

const RUNNING: Claim = { _tag: "Running" }
const CLAIMED: Claim = { _tag: "Claimed" }

const claimOf = (row: ClaimRow): Claim =>
  row.mine
    ? CLAIMED
    : row.owner !== null || row.status === null || row.fingerprint === null || row.body === null
    ? RUNNING
    : { _tag: "Kept", answer: { fingerprint: row.fingerprint, status: row.status, body: row.body } }

export const IdempotencyRepoSql = Layer.effect(IdempotencyRepo, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return IdempotencyRepo.of({
    // One statement, the request's authentication too: the active key with that hash, and under
    // it the Idempotency-Key taken when free, expired or abandoned; otherwise its row as it was
    // is read. A row made by a request whose claim committed after this statement began is not
    // seen: that request is running. No key, no row: nothing is claimed.
    //
    // Its commit does not wait for the WAL to reach the disk (synchronous_commit off for this
    // statement's transaction only): others see the claim as soon as it commits all the same.
    // The WAL is written in order, so whatever the request commits next (its change and kept
    // answer, or the release of the claim) flushes the claim with it; a crash can lose only a
    // claim whose request has committed nothing since, and a retry then runs afresh, as it must.
    claimWithKey: (keyHash, value, owner, times) =>
      sql<ClaimRow>`WITH api_key AS (
            SELECT ${sql.literal(KEY_CONTEXT_COLUMNS)}
            FROM api_keys k JOIN tenants t ON t.id = k.tenant_id
            WHERE k.key_hash = ${keyHash} AND k.revoked_at IS NULL
          ), taken AS (
            INSERT INTO idempotency_keys AS i (tenant_id, api_key_id, idempotency_key, created_ms, owner, lease_until_ms)
            SELECT api_key.tenant_id, api_key.id, ${value}::text, ${times.nowMs}::bigint, ${owner}::text,
                   ${times.nowMs + times.leaseMs}::bigint
            FROM api_key
            ON CONFLICT (tenant_id, api_key_id, idempotency_key) DO UPDATE
              SET created_ms = EXCLUDED.created_ms, owner = EXCLUDED.owner, lease_until_ms = EXCLUDED.lease_until_ms,
                  fingerprint = NULL, status = NULL, body = NULL
              WHERE (i.owner IS NULL AND i.created_ms < ${times.keptAfterMs})
                 OR (i.owner IS NOT NULL AND i.lease_until_ms <= ${times.nowMs})
            RETURNING 1
          )
          SELECT api_key.*, EXISTS (SELECT 1 FROM taken) AS mine, i.owner, i.fingerprint, i.status, i.body,
                 set_config('synchronous_commit', 'off', true) AS async_commit
          FROM api_key
          LEFT JOIN idempotency_keys i
            ON i.tenant_id = api_key.tenant_id AND i.api_key_id = api_key.id AND i.idempotency_key = ${value}`.pipe(
        Effect.map(([row]) => row === undefined ? undefined : { key: keyContextOf(row), claim: claimOf(row) }),
        Effect.orDie
      ),
    keep: (scope, owner, answer) =>
      sql`UPDATE idempotency_keys
          SET owner = NULL, lease_until_ms = NULL, fingerprint = ${answer.fingerprint}, status = ${answer.status}, body = ${answer.body}
          WHERE tenant_id = ${scope.tenantId} AND api_key_id = ${scope.keyId} AND idempotency_key = ${scope.value} AND owner = ${owner}
          RETURNING 1`.pipe(Effect.map((rows) => rows.length === 1), Effect.orDie),
    release: (scope, owner) =>
      sql`DELETE FROM idempotency_keys
          WHERE tenant_id = ${scope.tenantId} AND api_key_id = ${scope.keyId} AND idempotency_key = ${scope.value} AND owner = ${owner}`.pipe(
        Effect.asVoid,
        Effect.orDie
      ),
    prune: (beforeMs, nowMs, batch) =>
      sql`DELETE FROM idempotency_keys WHERE (tenant_id, api_key_id, idempotency_key) IN (
            SELECT tenant_id, api_key_id, idempotency_key FROM idempotency_keys
            WHERE created_ms < ${beforeMs} AND (owner IS NULL OR lease_until_ms <= ${nowMs})
            ORDER BY created_ms LIMIT ${batch})
          RETURNING 1`.pipe(Effect.map((rows) => rows.length), Effect.orDie)
  })
}))
