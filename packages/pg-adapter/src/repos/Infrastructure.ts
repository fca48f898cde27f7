/** Adapters for the infrastructure ports: SQL transactions and the SHA-256 key hasher. */
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { createHash } from "node:crypto"
import { KeyHasher, Transactor } from "@chamber/core"

export const TransactorSql = Layer.effect(Transactor, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return Transactor.of({
    withTransaction: (self) =>
      sql.withTransaction(self).pipe(
        Effect.catchIf((e): e is any => (e as any)?._tag === "SqlError", (e) => Effect.die(e))
      ) as any
  })
}))

export const KeyHasherNode = Layer.succeed(KeyHasher)({
  hash: (plaintext) => createHash("sha256").update(plaintext).digest("hex")
})
