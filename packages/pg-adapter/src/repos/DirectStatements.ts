/**
 * How a repository runs its hot statements (the write paths', which usually run inside a
 * transaction, and the key lookup of every request): SQL text with `$1`-style parameters, sent
 * straight to the transaction's connection, or to a connection borrowed from the client's pool
 * outside one, without the statement span, its exit hook and the template compilation the
 * statement path adds to each (bench/README.md "The statements of a transaction"). With a tracer
 * (an embedder's spans stay whole) or a statement transformer installed, the same text runs as a
 * plain statement (`sql.unsafe`).
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as References from "effect/References"
import type * as SqlClient from "effect/sql/SqlClient"
import type { Borrower, Connection } from "effect/sql/SqlConnection"
import type { SqlError } from "effect/sql/SqlError"
import * as Statement from "effect/sql/Statement"

export interface DirectStatements {
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
  /** The rows of a statement whose shape depends on `key`: `rows(textOf(key, statement, params), params)`. */
  readonly shaped: <A extends object>(key: string, statement: () => Statement.Statement<A>, params: ReadonlyArray<unknown>) => Effect.Effect<ReadonlyArray<A>, SqlError>
}

/**
 * The hot statements' runner over `sql`. A client that transforms rows (column names, say) would
 * read differently on the direct path: it is refused here, at start, rather than served wrong.
 */
export const directStatements = (sql: SqlClient.SqlClient): DirectStatements => {
  if (sql.withoutTransforms() !== sql) throw new Error("directStatements: the SQL client transforms rows; the direct path would not")
  const borrow = poolBorrower(sql)
  /** How the statement runs directly, or undefined for the statement path. */
  const directly = <A>(
    fiber: { readonly context: Context.Context<never>; getRef<X>(ref: Context.Reference<X>): X },
    run: (connection: Connection) => Effect.Effect<A, SqlError>
  ): Effect.Effect<A, SqlError> | undefined => {
    if (fiber.getRef(References.TracerEnabled) || fiber.getRef(Statement.CurrentTransformer) !== undefined) return undefined
    const transaction = Context.getOrUndefined(fiber.context, sql.transactionService)
    return transaction !== undefined ? run(transaction[0]) : borrow?.(run)
  }
  const texts = new Map<string, string>()
  const rows = <A extends object>(text: string, params: ReadonlyArray<unknown>) =>
    Effect.withFiber((fiber) =>
      directly(fiber, (connection) => connection.execute(text, params, undefined) as Effect.Effect<ReadonlyArray<A>, SqlError>) ??
        sql.unsafe<A>(text, params)
    )
  const textOf = (key: string, statement: () => Statement.Statement<unknown>, params: ReadonlyArray<unknown>) => {
    let text = texts.get(key)
    if (text === undefined) {
      const [compiled, own] = statement().compile()
      if (own.length !== params.length || own.some((p, i) => p !== params[i])) {
        throw new Error(`directStatements: the parameters given for ${JSON.stringify(key)} are not the statement's own`)
      }
      texts.set(key, text = compiled)
    }
    return text
  }
  return {
    rows,
    values: (text, params) =>
      Effect.withFiber((fiber) => directly(fiber, (connection) => connection.executeValues(text, params)) ?? sql.unsafe(text, params).values),
    textOf,
    shaped: <A extends object>(key: string, statement: () => Statement.Statement<A>, params: ReadonlyArray<unknown>) =>
      rows<A>(textOf(key, statement, params), params)
  }
}

/**
 * How the client's own statements borrow a pooled connection for one statement outside a
 * transaction. `effect/sql` keeps it on every statement it makes (`borrower`) without declaring
 * it: where a version of it has none, statements outside a transaction take the statement path,
 * slower but the same (a test says when that happens).
 */
export const poolBorrower = (sql: SqlClient.SqlClient): Borrower | undefined => {
  const borrower = (sql.unsafe("SELECT 1") as unknown as { readonly borrower?: unknown }).borrower
  return typeof borrower === "function" ? borrower as Borrower : undefined
}
