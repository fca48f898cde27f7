/** The in-process rate-limit store's saved windows in SQL: all changed keys in one statement. */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import { type Bucket, expiredBefore, RateLimitSnapshots } from "@chamber/core"

interface Row {
  readonly key: string
  readonly buckets: ReadonlyArray<Bucket>
}

export const RateLimitSnapshotsSql = Layer.effect(RateLimitSnapshots, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return RateLimitSnapshots.of({
    save: (windows, now) => {
      const rows = windows.map((w) => ({ key: w.key, buckets: w.buckets, latest_ms: Math.max(0, ...w.buckets.map((b) => b.last)) }))
      return sql`WITH saved AS (
            INSERT INTO rate_limit_windows (key, buckets, latest_ms)
            SELECT key, buckets, latest_ms FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
              AS r(key text, buckets jsonb, latest_ms bigint)
            ON CONFLICT (key) DO UPDATE SET buckets = EXCLUDED.buckets, latest_ms = EXCLUDED.latest_ms
          )
          DELETE FROM rate_limit_windows WHERE latest_ms <= ${expiredBefore(now)}`.pipe(Effect.asVoid, Effect.orDie)
    },
    load: (key) =>
      (key === undefined
        ? sql<Row>`SELECT key, buckets FROM rate_limit_windows`
        : sql<Row>`SELECT key, buckets FROM rate_limit_windows WHERE key = ${key}`).pipe(Effect.orDie)
  })
}))
