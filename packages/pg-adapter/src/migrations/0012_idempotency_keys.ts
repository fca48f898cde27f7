/**
 * Idempotency-Key (ruling 28, repos/IdempotencyRepoSql.ts): one row per chamber, API key and
 * value. While its request runs, `owner` and `lease_until_ms` say whose claim it is and until
 * when; once kept, they are null and `fingerprint`, `status` and `body` hold the answer.
 * Times are epoch milliseconds of the API's clock. Pruned oldest first by `created_ms`.
 */
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE idempotency_keys (
      tenant_id bigint NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      api_key_id bigint NOT NULL REFERENCES api_keys(id) ON DELETE CASCADE,
      idempotency_key text NOT NULL,
      created_ms bigint NOT NULL,
      owner text,
      lease_until_ms bigint,
      fingerprint text,
      status smallint,
      body bytea,
      PRIMARY KEY (tenant_id, api_key_id, idempotency_key),
      CHECK ((owner IS NULL) = (status IS NOT NULL))
    )`
  yield* sql`CREATE INDEX idempotency_keys_created ON idempotency_keys (created_ms)`
})
