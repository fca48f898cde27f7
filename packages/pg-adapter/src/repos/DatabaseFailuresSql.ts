/**
 * Which failures of PostgreSQL (or the embedded database's wire) are an outage: the connection
 * could not be made, timed out or went away (the driver's ConnectionError, SQLSTATE class 08); a
 * bounded wait ran out (55P03 lock_not_available, which the embedded database answers when another
 * connection's transaction holds it too long, and 57014 from a statement_timeout); the server is
 * shutting down, crashed or is starting (57P01, 57P02, 57P03), has no connection slot left
 * (53300), or ended an idle connection (57P05). A transaction the server aborted to break a
 * deadlock (40P01) or a serialization conflict (40001) is answered the same way: it was rolled back
 * whole, so nothing of it is committed and the request again may well succeed. Any other failure is
 * not an outage.
 */
import * as Layer from "effect/Layer"
import * as SqlError from "effect/sql/SqlError"
import { DatabaseFailures, DatabaseUnavailable } from "@chamber/core"

const OUTAGE_STATES = new Set(["57P01", "57P02", "57P03", "57P05", "53300"])

const OUTAGE_REASONS = new Set<SqlError.SqlErrorReason["_tag"]>([
  "ConnectionError",
  "LockTimeoutError",
  "StatementTimeoutError",
  "DeadlockError",
  "SerializationError"
])

const sqlStateOf = (reason: SqlError.SqlErrorReason): unknown => (reason.cause as { readonly code?: unknown } | null)?.code

/** The outage `defect` is, or undefined. */
export const unavailable = (defect: unknown): DatabaseUnavailable | undefined => {
  if (defect instanceof DatabaseUnavailable) return defect
  if (!SqlError.isSqlError(defect)) return undefined
  const reason = defect.reason
  if (!OUTAGE_REASONS.has(reason._tag) && !OUTAGE_STATES.has(sqlStateOf(reason) as string)) return undefined
  const cause = reason.cause instanceof Error && !defect.message.endsWith(reason.cause.message) ? `: ${reason.cause.message}` : ""
  return new DatabaseUnavailable({ reason: `${defect.message}${cause}` })
}

export const DatabaseFailuresSql = Layer.succeed(DatabaseFailures)({ unavailable })
