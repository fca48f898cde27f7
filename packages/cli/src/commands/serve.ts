/** `chamber serve`: migrate, then serve /api/v1 and the docs until SIGINT/SIGTERM. */
import { Effect, Layer, LogLevel, References } from "effect"
import { NodeRuntime } from "@effect/platform-node"
import { databaseConfigFromEnv } from "@chamber/pg-adapter"
import { HttpLive, NodeServerLive } from "@chamber/http-adapter"
import { seedDemo } from "../demo/Demo.ts"
import { bold, dim, fail } from "../Output.ts"
import { causeError, storage } from "../Run.ts"
import { demoProgress } from "../demo/progress.ts"

export interface ServeOptions {
  readonly port?: string
  readonly host?: string
  readonly relay?: boolean
  readonly demoIfEmpty?: boolean
  readonly json?: boolean
}

export const serve = (opts: ServeOptions) => {
  const port = Number(opts.port ?? process.env.PORT ?? 3000)
  const host = opts.host ?? process.env.HOST ?? "127.0.0.1"
  if (!Number.isInteger(port) || port < 0 || port > 65535) return fail(opts.json === true, new Error(`invalid port: ${opts.port}`))
  const config = databaseConfigFromEnv()
  const where = config._tag === "Postgres" ? "PostgreSQL (DATABASE_URL)" : `embedded PGlite at ${config.dataDir}`

  const announce = Effect.gen(function*() {
    if (opts.demoIfEmpty === true) {
      const demo = yield* seedDemo(demoProgress)
      if (demo.created) {
        console.log(bold(`Demo chamber created: ${demo.tenant!.name} (${demo.tenant!.public_id}), ${demo.members} members.`))
        console.log(`API key (shown once, keep it): ${bold(demo.key!)}`)
        console.log(dim(`  curl -H "Authorization: Bearer ${demo.key}" http://${host}:${port}/api/v1/members`))
      }
    }
    console.log(`Chamber Data API on http://${host}:${port}/api/v1  ${dim(`(docs: http://${host}:${port}/docs, database: ${where})`)}`)
    if (opts.relay !== false) console.log(dim("Webhook relay: not part of this build yet; nothing to deliver."))
  })

  const app = Layer.mergeAll(HttpLive, Layer.effectDiscard(announce)).pipe(
    Layer.provide(NodeServerLive({ port, host })),
    Layer.provide(storage({ exclusive: true }))
  )
  return Layer.launch(app).pipe(
    Effect.provideService(References.MinimumLogLevel, logLevel(process.env.LOG_LEVEL)),
    Effect.catchCause((cause) => Effect.sync(() => fail(opts.json === true, causeError(cause)))),
    NodeRuntime.runMain({ disableErrorReporting: true })
  )
}

/** LOG_LEVEL (any case: debug, info, warn, error, none...), default info. */
const logLevel = (value: string | undefined): LogLevel.LogLevel =>
  LogLevel.values.find((l) => l.toLowerCase() === (value ?? "info").toLowerCase()) ?? "Info"
