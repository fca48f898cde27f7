/**
 * Storage runtimes for tests. Every storage suite runs on embedded PGlite and on the PostgreSQL
 * server at DATABASE_URL, each suite in a database of its own. With CI=true a missing or
 * unreachable server fails the run; locally, without DATABASE_URL, the PostgreSQL suite says
 * loudly that it did not run, and a suite that runs on PostgreSQL only is reported skipped
 * (`postgresOnly`), so no test file is ever left without a test.
 */
import { describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Migrator from "effect/sql/Migrator"
import pg from "pg"
import type { DatabaseConfig } from "../src/Database.ts"
import { migrations } from "../src/migrations/index.ts"

export interface Runtime {
  readonly name: "pglite" | "postgres"
  /** A fresh, empty database for one suite, dropped with the layer. */
  readonly database: Layer.Layer<DatabaseConfigRef>
}

import * as Context from "effect/Context"
export class DatabaseConfigRef extends Context.Service<DatabaseConfigRef, DatabaseConfig>()("test/DatabaseConfig") {}

const serverUrl = process.env.DATABASE_URL
const ci = process.env.CI === "true" || process.env.CI === "1"

const freshPostgres = (url: string) =>
  Layer.effect(DatabaseConfigRef, Effect.acquireRelease(
    Effect.promise(async () => {
      const name = `chamber_t_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
      const admin = new pg.Client({ connectionString: url })
      await admin.connect()
      try {
        await admin.query(`CREATE DATABASE ${name}`)
      } finally {
        await admin.end()
      }
      const u = new URL(url)
      u.pathname = `/${name}`
      return { name, config: { _tag: "Postgres" as const, url: u.toString(), maxConnections: 4 } }
    }),
    ({ name }) =>
      Effect.promise(async () => {
        const admin = new pg.Client({ connectionString: url })
        await admin.connect()
        try {
          await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
        } finally {
          await admin.end()
        }
      })
  ).pipe(Effect.map((r) => r.config)))

export const pgliteRuntime: Runtime = {
  name: "pglite",
  database: Layer.succeed(DatabaseConfigRef)({ _tag: "Embedded", dataDir: undefined })
}

const missingServer = () => {
  const message = "DATABASE_URL is not set: the PostgreSQL storage suites need a server."
  if (ci) throw new Error(`${message} CI must not skip them.`)
  console.warn(`\n*** ${message} They did NOT run. Set DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres to run them. ***\n`)
}

/** The runtimes every storage suite runs on. */
export const runtimes = (): ReadonlyArray<Runtime> => {
  if (serverUrl === undefined || serverUrl === "") {
    missingServer()
    return [pgliteRuntime]
  }
  return [pgliteRuntime, { name: "postgres", database: freshPostgres(serverUrl) }]
}

/**
 * The runtimes of a suite that runs on PostgreSQL only: the server's, or, without DATABASE_URL,
 * none, and then a skipped test under `suite` whose title says how to run it.
 */
export const postgresOnly = (suite: string): ReadonlyArray<Runtime> => {
  const found = runtimes().filter((rt) => rt.name === "postgres")
  if (found.length === 0) {
    describe.skip(suite, () => {
      it.skip(`skipped: DATABASE_URL is not set; set DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres to run it on PostgreSQL`, () => {})
    })
  }
  return found
}

/** Builds a suite's layer on a fresh database of the runtime. */
export const onDatabase = <A, E, R>(rt: Runtime, build: (config: DatabaseConfig) => Layer.Layer<A, E, R>) =>
  Layer.unwrap(Effect.gen(function*() {
    return build(yield* DatabaseConfigRef)
  })).pipe(Layer.provide(rt.database))

/** The migrations numbered below `number` applied, as a database stood before that one (a migration's test starts there). */
export const migrateBefore = (number: number) =>
  Migrator.make({})({
    loader: Migrator.fromRecord(Object.fromEntries(Object.entries(migrations).filter(([id]) => Number(id.split("_")[0]) < number))),
    table: "chamber_migrations"
  })

export { type CutAt, FaultProxy, faultProxy, type ProxyMode } from "./proxy.ts"
