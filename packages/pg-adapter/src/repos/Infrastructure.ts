/** Adapters for the infrastructure ports: SQL transactions, readiness and the SHA-256 key hasher. */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import { createHash } from "node:crypto"
import { JoinsCallerTransaction, KeyHasher, Readiness, Transactor } from "@chamber/core"

export const TransactorSql = Layer.effect(Transactor, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return Transactor.of({
    // A failure to begin or commit is infrastructure: a defect, not an error of the caller's.
    withTransaction: (self) =>
      Effect.flatMap(
        Effect.service(JoinsCallerTransaction),
        (joins) => joins ? self : sql.withTransaction(self).pipe(Effect.catchTag("SqlError", Effect.die))
      )
  })
}))

export const KeyHasherNode = Layer.succeed(KeyHasher)({
  hash: (plaintext) => createHash("sha256").update(plaintext).digest("hex")
})

export const ReadinessSql = Layer.effect(Readiness, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return Readiness.of({
    check: sql`SELECT 1`.pipe(
      Effect.as(true),
      Effect.timeoutOrElse({ duration: "1 second", orElse: () => Effect.succeed(false) }),
      Effect.catchCause(() => Effect.succeed(false))
    )
  })
}))
