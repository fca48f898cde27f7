/**
 * How a repository runs the statements of its write paths, which usually run inside a
 * transaction: SQL text with `$1`-style parameters, sent straight to the transaction's
 * connection, without the statement span, its exit hook, the connection lookup and the
 * template compilation the statement path adds to each one (bench/README.md "The statements of
 * a transaction"). Outside a transaction, with a tracer (an embedder's spans stay whole) or with
 * a statement transformer installed, the same text runs as a plain statement (`sql.unsafe`).
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as References from "effect/References"
import type * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import * as Statement from "effect/sql/Statement"

export interface InTransaction {
  /** The rows of `text` run with `params`, as objects. */
  readonly rows: <A extends object>(text: string, params: ReadonlyArray<unknown>) => Effect.Effect<ReadonlyArray<A>, SqlError>
  /** The rows of `text` run with `params`, as arrays of column values (`statement.values`). */
  readonly values: (text: string, params: ReadonlyArray<unknown>) => Effect.Effect<ReadonlyArray<ReadonlyArray<unknown>>, SqlError>
  /**
   * The text of a statement whose shape depends on `key` (the columns an insert or update
   * writes), compiled from `statement()` the first time the key is met, so the template stays
   * the one place the SQL is written. `params` are the parameters the caller will send with the
   * text; the first compilation checks that they are the template's own, in its order, and dies
   * otherwise.
   */
  readonly textOf: (key: string, statement: () => Statement.Statement<unknown>, params: ReadonlyArray<unknown>) => string
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
  const texts = new Map<string, string>()
  return {
    rows: <A extends object>(text: string, params: ReadonlyArray<unknown>) =>
      Effect.withFiber((fiber) => {
        const connection = connectionOf(fiber)
        return connection === undefined
          ? sql.unsafe<A>(text, params)
          : connection.execute(text, params, undefined) as Effect.Effect<ReadonlyArray<A>, SqlError>
      }),
    values: (text, params) =>
      Effect.withFiber((fiber) => {
        const connection = connectionOf(fiber)
        return connection === undefined ? sql.unsafe(text, params).values : connection.executeValues(text, params)
      }),
    textOf: (key, statement, params) => {
      let text = texts.get(key)
      if (text === undefined) {
        const [compiled, own] = statement().compile()
        if (own.length !== params.length || own.some((p, i) => p !== params[i])) {
          throw new Error(`inTransaction: the parameters given for ${JSON.stringify(key)} are not the statement's own`)
        }
        texts.set(key, text = compiled)
      }
      return text
    }
  }
}
