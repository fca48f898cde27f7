/** Idempotency-Key claims and kept answers (core idempotency/IdempotencyRepo.ts), table of migration 12. */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import { type Claim, IdempotencyRepo } from "@chamber/core"

interface ClaimRow {
  readonly mine: boolean
  readonly owner: string | null
  readonly fingerprint: string | null
  readonly status: number | null
  readonly body: Uint8Array | null
}

const RUNNING: Claim = { _tag: "Running" }
const CLAIMED: Claim = { _tag: "Claimed" }

export const IdempotencyRepoSql = Layer.effect(IdempotencyRepo, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return IdempotencyRepo.of({
    // One statement: the key is taken when free, expired or abandoned; otherwise the row as it
    // was is read. A row made by a request whose claim committed after this statement began is
    // not seen: that request is running.
    claim: (scope, owner, times) =>
      sql<ClaimRow>`WITH taken AS (
            INSERT INTO idempotency_keys AS k (tenant_id, api_key_id, idempotency_key, created_ms, owner, lease_until_ms)
            VALUES (${scope.tenantId}, ${scope.keyId}, ${scope.value}, ${times.nowMs}, ${owner}, ${times.nowMs + times.leaseMs})
            ON CONFLICT (tenant_id, api_key_id, idempotency_key) DO UPDATE
              SET created_ms = EXCLUDED.created_ms, owner = EXCLUDED.owner, lease_until_ms = EXCLUDED.lease_until_ms,
                  fingerprint = NULL, status = NULL, body = NULL
              WHERE (k.owner IS NULL AND k.created_ms < ${times.keptAfterMs})
                 OR (k.owner IS NOT NULL AND k.lease_until_ms <= ${times.nowMs})
            RETURNING 1
          )
          SELECT EXISTS (SELECT 1 FROM taken) AS mine, k.owner, k.fingerprint, k.status, k.body
          FROM (SELECT 1) AS one
          LEFT JOIN idempotency_keys k
            ON k.tenant_id = ${scope.tenantId} AND k.api_key_id = ${scope.keyId} AND k.idempotency_key = ${scope.value}`.pipe(
        Effect.map(([row]): Claim =>
          row === undefined || row.mine
            ? CLAIMED
            : row.owner !== null || row.status === null || row.fingerprint === null || row.body === null
            ? RUNNING
            : { _tag: "Kept", answer: { fingerprint: row.fingerprint, status: row.status, body: row.body } }
        ),
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
