/**
 * A transaction PostgreSQL chose to abort (a deadlock, a serialization conflict) is answered like
 * an outage, 503 with Retry-After (ruling 27, docs/api.md "Errors"): it was rolled back whole, so
 * nothing of it was committed and the same request again may succeed. Provoked for real: two
 * transactions take two rows in opposite order.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as SqlClient from "effect/sql/SqlClient"
import { DatabaseLive } from "../src/Database.ts"
import { unavailable } from "../src/repos/DatabaseFailuresSql.ts"
import { onDatabase, postgresOnly } from "./harness.ts"

/** The defect (or failure) a transaction ended with. */
const whyItEnded = (exit: Exit.Exit<unknown, unknown>): unknown => {
  if (Exit.isSuccess(exit)) return undefined
  for (const reason of exit.cause.reasons) {
    if (Cause.isDieReason(reason)) return reason.defect
    if (Cause.isFailReason(reason)) return reason.error
  }
  return undefined
}

for (const rt of postgresOnly("aborted transactions on postgres")) {
  describe(`aborted transactions on ${rt.name}`, () => {
    layer(onDatabase(rt, (config) => DatabaseLive(config, { migrateOnStart: false })), { timeout: 60_000 })((it) => {
      it.effect("a deadlock's victim is named an outage (503), the survivor commits", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          yield* sql`CREATE TABLE locks (id int PRIMARY KEY, n int NOT NULL)`
          yield* sql`INSERT INTO locks VALUES (1, 0), (2, 0)`
          const firstHolds = yield* Deferred.make<void>()
          const secondHolds = yield* Deferred.make<void>()
          const take = (mine: number, theirs: number, holding: Deferred.Deferred<void>, other: Deferred.Deferred<void>) =>
            sql.withTransaction(Effect.gen(function*() {
              yield* sql`UPDATE locks SET n = n + 1 WHERE id = ${mine}`
              yield* Deferred.succeed(holding, undefined)
              yield* Deferred.await(other)
              yield* sql`UPDATE locks SET n = n + 1 WHERE id = ${theirs}`
            }))
          const [a, b] = yield* Effect.all([
            Effect.exit(take(1, 2, firstHolds, secondHolds)),
            Effect.exit(take(2, 1, secondHolds, firstHolds))
          ], { concurrency: 2 })
          const failed = [a, b].filter(Exit.isFailure)
          assert.strictEqual(failed.length, 1, "PostgreSQL aborts one of the two")
          const outage = unavailable(whyItEnded(failed[0]!))
          assert.isDefined(outage, `not named an outage: ${String(whyItEnded(failed[0]!))}`)
          const rows = yield* sql<{ readonly n: number }>`SELECT sum(n)::int AS n FROM locks`
          assert.strictEqual(rows[0]!.n, 2, "only the survivor's two updates are committed")
        }).pipe(Effect.orDie))
    })
  })
}
