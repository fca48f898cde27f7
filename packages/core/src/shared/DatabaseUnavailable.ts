/**
 * The database does not answer (ruling 27): it is restarting, failing over or unreachable, or the
 * embedded database is held by another connection's transaction past the bounded wait. Nothing of
 * the request was committed, except when the connection went while COMMIT itself was on it (its
 * outcome unknown). The HTTP adapter answers 503 with `Retry-After` (docs/api.md "Errors").
 */
import * as Context from "effect/Context"
import * as Schema from "effect/Schema"

export class DatabaseUnavailable extends Schema.TaggedError<DatabaseUnavailable>()("DatabaseUnavailable", {
  /** What the driver said, for the log. */
  reason: Schema.String
}) {
  override get message() {
    return `The database does not answer: ${this.reason}`
  }
}

/**
 * Port: which failures of the database mean that it does not answer. Repositories let the
 * database's failures through as defects; the adapter of the database knows its driver's failures
 * and names the ones that are an outage, every other one stays unexplained (a bug).
 */
export class DatabaseFailures extends Context.Service<DatabaseFailures, {
  /** The outage `defect` is, or undefined when it is no outage. */
  readonly unavailable: (defect: unknown) => DatabaseUnavailable | undefined
}>()("chamber/DatabaseFailures") {}
