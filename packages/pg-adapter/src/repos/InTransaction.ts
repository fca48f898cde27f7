/**
 * How a repository runs a statement that usually runs inside a transaction: straight on the
 * transaction's connection, compiled as the statement path would compile it, without the span,
 * its exit hook and the connection lookup that path adds to every statement (bench/README.md
 * "The statements of a transaction"). Outside a transaction, with a tracer (an embedder's spans
 * stay whole) or with a statement transformer installed, the statement runs as it always does.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as References from "effect/References"
import type * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import * as Statement from "effect/sql/Statement"

export interface InTransaction {
  /** The statement's rows, as objects. */
  readonly rows: <A extends object>(statement: Statement.Statement<A>) => Effect.Effect<ReadonlyArray<A>, SqlError>
  /** The statement's rows, as arrays of column values (`statement.values`). */
  readonly values: (statement: Statement.Statement<unknown>) => Effect.Effect<ReadonlyArray<ReadonlyArray<unknown>>, SqlError>
}

/**
 * The runner for `sql`'s transactions. A client that transforms rows (column names, say) would
 * read differently on the direct path: it is refused here, at start, rather than served wrong.
 */
export const inTransaction = (sql: SqlClient.SqlClient): InTransaction => {
  if (sql.withoutTransforms() !== sql) throw new Error("inTransaction: the SQL client transforms rows; the direct path would not")
  const connectionOf = (fiber: { readonly context: Context.Context<never>; getRef<A>(ref: Context.Reference<A>): A }) =>
    fiber.getRef(References.TracerEnabled) || fiber.getRef(Statement.CurrentTransformer) !== undefined
      ? undefined
      : Context.getOrUndefined(fiber.context, sql.transactionService)?.[0]
  return {
    rows: <A extends object>(statement: Statement.Statement<A>) =>
      Effect.withFiber((fiber) => {
        const connection = connectionOf(fiber)
        if (connection === undefined) return statement
        const [text, params] = statement.compile()
        return connection.execute(text, params, undefined) as Effect.Effect<ReadonlyArray<A>, SqlError>
      }),
    values: (statement) =>
      Effect.withFiber((fiber) => {
        const connection = connectionOf(fiber)
        if (connection === undefined) return statement.values
        const [text, params] = statement.compile()
        return connection.executeValues(text, params)
      })
  }
}
