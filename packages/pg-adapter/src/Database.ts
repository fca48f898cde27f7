/**
 * The database behind every repository: PostgreSQL at DATABASE_URL, else embedded PGlite under
 * the data directory. Both speak the same SQL through the same `@effect/sql-pg` client; the
 * embedded one through `PgliteWire` (in process) or its Unix socket (another process).
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Migrator from "effect/sql/Migrator"
import * as SqlClient from "effect/sql/SqlClient"
import { PgClient } from "@effect/sql-pg"
import { migrations } from "./migrations/index.ts"
import { DEFAULT_DATA_DIR } from "./embedded/Cluster.ts"
import { type EmbeddedDatabase, openEmbedded } from "./embedded/EmbeddedDatabase.ts"
import { ImportSlices } from "./repos/HeldRows.ts"

export type DatabaseConfig =
  | {
    readonly _tag: "Postgres"
    readonly url: string
    readonly maxConnections?: number | undefined
    /** Statements one connection carries at once, pipelined (default `DEFAULT_PIPELINE`; 1: one at a time). */
    readonly pipeline?: number | undefined
  }
  | { readonly _tag: "Embedded"; readonly dataDir: string | undefined }

/**
 * Statements a PostgreSQL connection carries at once by default (docs/operations.md
 * "PostgreSQL"). Two in flight together share one write and one read; more let one slow
 * statement hold up those queued behind it on its connection.
 */
export const DEFAULT_PIPELINE = 2
/** The most a connection may be given to carry. */
export const MAX_PIPELINE = 32

/** `pipeline` when it is a whole number from 1 to MAX_PIPELINE; else throws, naming `source`. */
const checkedPipeline = (pipeline: number, source: string, shown: string = String(pipeline)): number => {
  if (!Number.isInteger(pipeline) || pipeline < 1 || pipeline > MAX_PIPELINE) {
    throw new Error(`${source} must be a whole number from 1 to ${MAX_PIPELINE}, not "${shown}".`)
  }
  return pipeline
}

const MIGRATIONS_TABLE = "chamber_migrations"
const MIGRATION_LOCK = 727274

/** Applies pending migrations; concurrent callers on one server take turns. */
export const migrate = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const run = Migrator.make({})({ loader: Migrator.fromRecord(migrations), table: MIGRATIONS_TABLE })
  return yield* sql.withTransaction(
    sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`.pipe(Effect.andThen(run))
  )
}).pipe(Effect.orDie, Effect.withSpan("Database.migrate"))

/** Runs `effect`, then says at debug level how long it took (LOG_LEVEL=debug shows where a start goes). */
const timedDebug = <A, E, R>(message: string, effect: Effect.Effect<A, E, R>, fields: (a: A) => Record<string, unknown> = () => ({})) =>
  Effect.timed(effect).pipe(
    Effect.tap(([elapsed, a]) => Effect.logDebug(message).pipe(Effect.annotateLogs({ ms: Math.round(Duration.toMillis(elapsed)), ...fields(a) }))),
    Effect.map(([, a]) => a)
  )

const postgres = (url: string, maxConnections: number, pipeline: number) =>
  PgClient.layer({
    url: Redacted.make(url),
    maxConnections,
    applicationName: "chamber",
    // Transactions still hold a connection of their own (the driver reserves it).
    multiplex: pipeline > 1,
    multiplexConcurrency: pipeline
  })

/**
 * Embedded: the first process to open the data directory owns PGlite and serves the socket;
 * any other process connects to that socket.
 */
const embedded = (dataDir: string | undefined, exclusive: boolean) =>
  Layer.unwrap(
    timedDebug("embedded database open", openEmbedded(dataDir, { requireOwnership: exclusive }), (db) => ({ owner: db.owner })).pipe(
      Effect.map(embeddedClient)
    )
  ).pipe(Layer.merge(Layer.succeed(ImportSlices)(true)))

/** The SQL client over an open embedded database. */
export const embeddedClient = (db: EmbeddedDatabase) =>
  PgClient.layer({
    stream: db.connect,
    username: "postgres",
    database: "postgres",
    // Prepared statements, as on PostgreSQL: PgliteWire keeps each connection's apart in PGlite's one session.
    maxConnections: db.owner ? 4 : 1
  })

export interface DatabaseOptions {
  /** Run pending migrations when the layer starts (default true). */
  readonly migrateOnStart?: boolean
  /** Embedded only: refuse (EmbeddedInUse) when another process already owns the data directory. */
  readonly exclusive?: boolean
}

/** SqlClient + PgClient, migrated unless `migrateOnStart` is false. */
export const DatabaseLive = (config: DatabaseConfig, options?: DatabaseOptions) => {
  const client = config._tag === "Postgres"
    ? postgres(config.url, config.maxConnections ?? 10, checkedPipeline(config.pipeline ?? DEFAULT_PIPELINE, "The database's pipeline"))
    : embedded(config.dataDir, options?.exclusive === true)
  return options?.migrateOnStart === false
    ? client
    : Layer.effectDiscard(timedDebug("migrations applied", migrate, (applied) => ({ applied: applied.length }))).pipe(Layer.provideMerge(client))
}

/** DATABASE_PIPELINE, or the default when unset; a value out of range throws, with what is allowed. */
export const pipelineFromEnv = (env: Record<string, string | undefined> = process.env): number => {
  const text = env.DATABASE_PIPELINE
  if (text === undefined || text === "") return DEFAULT_PIPELINE
  return checkedPipeline(/^\d+$/.test(text.trim()) ? Number(text) : NaN, "DATABASE_PIPELINE", text)
}

/**
 * DATABASE_URL when set (DATABASE_PIPELINE statements a connection), else embedded PGlite under
 * CHAMBER_DATA_DIR (default `.chamber/data`). Throws on a DATABASE_PIPELINE out of range.
 */
export const databaseConfigFromEnv = (env: Record<string, string | undefined> = process.env): DatabaseConfig =>
  env.DATABASE_URL !== undefined && env.DATABASE_URL !== ""
    ? { _tag: "Postgres", url: env.DATABASE_URL, pipeline: pipelineFromEnv(env) }
    : { _tag: "Embedded", dataDir: env.CHAMBER_DATA_DIR || DEFAULT_DATA_DIR }
