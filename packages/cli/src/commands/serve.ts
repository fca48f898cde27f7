/**
 * `chamber serve` (docs/cli.md "Serving"): migrate, then serve /api/v1 and the docs until SIGINT
 * or SIGTERM, then stop gracefully (docs/cli.md "Stopping"). A request must arrive whole within
 * CHAMBER_REQUEST_TIMEOUT; kept Idempotency-Key answers are replayed for CHAMBER_IDEMPOTENCY_RETENTION. Log lines follow LOG_FORMAT and LOG_LEVEL (docs/cli.md "Logs").
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as References from "effect/References"
import * as HttpServer from "effect/http/HttpServer"
import * as HttpServerError from "effect/http/HttpServerError"
import { ChangesPruner, ImportSweeper } from "@chamber/core"
import { databaseConfigFromEnv, DeliveryStoreSql, StorageLive } from "@chamber/pg-adapter"
import { HttpLive, IdempotencyRetention, NodeServerLive } from "@chamber/http-adapter"
import { deliverySettingsFromEnv, HookPingsLive, RelayLive } from "@chamber/webhook-relay"
import { knownChamber, seedDemo } from "../demo/Demo.ts"
import { demoProgress } from "../demo/progress.ts"
import { parseDuration } from "../Durations.ts"
import { linesLogger, printLine } from "../LogLines.ts"
import { storedSecretsChecked } from "../StoredSecrets.ts"
import { describeStore, rateLimitsLayer, rateLimitSettingsFromEnv } from "../RateLimits.ts"
import { inert } from "../Inert.ts"
import { bold, dim, errorMessage, fail, printError } from "../Output.ts"
import { runUntilStopped } from "../Run.ts"
import { observability, observabilityFromEnv } from "../observability/Observability.ts"

export interface ServeOptions {
  readonly port?: string
  readonly host?: string
  readonly relay?: boolean
  readonly demoIfEmpty?: boolean
  readonly json?: boolean
}

export const serve = (opts: ServeOptions) => {
  const json = opts.json === true
  const portText = opts.port ?? process.env.PORT ?? "3000"
  const port = Number(portText)
  const host = opts.host ?? process.env.HOST ?? "127.0.0.1"
  if (!/^\d{1,5}$/.test(portText) || port > 65535) {
    return fail(json, new Error(`The port must be a whole number from 0 to 65535, not "${portText}" (--port or PORT).`))
  }
  const format = process.env.LOG_FORMAT ?? (json ? "json" : "text")
  if (format !== "text" && format !== "json") return fail(json, new Error(`LOG_FORMAT must be text or json, not "${format}".`))
  const level = logLevel(process.env.LOG_LEVEL ?? "info")
  if (level === undefined) {
    return fail(json, new Error(`LOG_LEVEL must be one of ${LogLevel.values.join(", ").toLowerCase()}, not "${process.env.LOG_LEVEL}".`))
  }
  const timeoutText = process.env.CHAMBER_SHUTDOWN_TIMEOUT ?? "30s"
  const shutdownTimeout = parseDuration(timeoutText)
  if (shutdownTimeout === undefined) {
    return fail(json, new Error(`CHAMBER_SHUTDOWN_TIMEOUT must be a duration such as 30s, 500ms or 2m, not "${timeoutText}".`))
  }
  const requestTimeoutText = process.env.CHAMBER_REQUEST_TIMEOUT ?? "30s"
  const requestTimeout = parseDuration(requestTimeoutText)
  if (requestTimeout === undefined || Duration.toMillis(requestTimeout) <= 0) {
    return fail(json, new Error(`CHAMBER_REQUEST_TIMEOUT must be a duration above zero, such as 30s, 500ms or 2m, not "${requestTimeoutText}".`))
  }
  const keepAliveText = process.env.CHAMBER_KEEP_ALIVE_TIMEOUT ?? "65s"
  const keepAliveTimeout = parseDuration(keepAliveText)
  if (keepAliveTimeout === undefined || Duration.toMillis(keepAliveTimeout) < 1_000) {
    return fail(json, new Error(`CHAMBER_KEEP_ALIVE_TIMEOUT must be a duration of a second or more, such as 65s or 10m, not "${keepAliveText}".`))
  }
  const retentionText = process.env.CHAMBER_IDEMPOTENCY_RETENTION ?? "72h"
  const idempotencyRetention = parseDuration(retentionText)
  if (idempotencyRetention === undefined || Duration.toMillis(idempotencyRetention) <= 0) {
    return fail(json, new Error(`CHAMBER_IDEMPOTENCY_RETENTION must be a duration such as 72h, 7d or 90m, not "${retentionText}".`))
  }
  const eventRetentionText = process.env.CHAMBER_EVENT_RETENTION ?? "90d"
  const eventRetention = parseDuration(eventRetentionText)
  if (eventRetention === undefined || Duration.toMillis(eventRetention) <= 0) {
    return fail(json, new Error(`CHAMBER_EVENT_RETENTION must be a duration above zero, such as 90d or 720h, not "${eventRetentionText}".`))
  }
  let settings, limits, config, observed
  try {
    settings = deliverySettingsFromEnv()
    limits = rateLimitSettingsFromEnv()
    config = databaseConfigFromEnv()
    observed = observabilityFromEnv()
  } catch (error) {
    return fail(json, error)
  }
  const where = config._tag === "Postgres" ? "PostgreSQL (DATABASE_URL)" : `embedded PGlite at ${config.dataDir}`

  // Every log line (the HTTP layer's included) goes to stdout in LOG_FORMAT, at LOG_LEVEL or above.
  const logs = Layer.mergeAll(
    Logger.layer([linesLogger(format)]),
    Layer.succeed(References.MinimumLogLevel)(level)
  )
  /** A fact for the operator: `text` for people, or in JSON one log line, `message` with `fields`. */
  const tell = (text: string, message: string, fields: Record<string, unknown> = {}) =>
    format === "json"
      ? Effect.logInfo(message).pipe(Effect.annotateLogs(fields), Effect.provide(logs))
      : Effect.sync(() => printLine(text))

  const announce = Effect.gen(function*() {
    const api = `${HttpServer.formatAddress((yield* HttpServer.HttpServer).address)}/api/v1`
    const docs = api.replace(/\/api\/v1$/, "/docs")
    if (opts.demoIfEmpty === true) {
      const demo = yield* seedDemo(demoProgress)
      if (demo.created) {
        const { key, members, tenant } = { key: demo.key!, members: demo.members!, tenant: demo.tenant! }
        yield* tell(
          [
            bold(`Demo chamber created: ${inert(tenant.name)} (${tenant.public_id}), ${members} members.`),
            `API key (shown once, keep it): ${bold(key)}`,
            dim(`  curl -H "Authorization: Bearer ${key}" ${api}/members`)
          ].join("\n"),
          "Demo chamber created",
          { tenant: tenant.public_id, name: tenant.name, members, key }
        )
      } else {
        yield* describeChamber
      }
    }
    const counts = describeStore(limits)
    yield* tell(
      `Chamber Data API on ${api}  ${dim(`(docs: ${docs}, database: ${where}, rate limits: ${limits.perMinute}/min per key, counted ${counts})`)}`,
      `Chamber Data API on ${api}`,
      { docs, database: where, rate_limit_per_minute: limits.perMinute, rate_limits_counted: counts }
    )
    if (opts.relay !== false) {
      const wakes = config._tag === "Postgres" ? "woken by LISTEN/NOTIFY" : "polling every second"
      yield* tell(dim(`Webhook relay: delivering in this process (${wakes}).`), "Webhook relay running", { wakes })
    }
  })

  /** A second `pnpm start`: which chamber this is, and how to get a key again (docs/cli.md "Serving"). */
  const describeChamber = Effect.gen(function*() {
    const { admin, chambers, tenant } = yield* knownChamber
    if (tenant === undefined) {
      return yield* tell(`${chambers} chambers in this database: pnpm chamber tenant list`, "Chambers already set up", { chambers })
    }
    if (admin === undefined) {
      const add = `pnpm chamber user add --tenant ${tenant.public_id} --email you@example.com --role chamber_admin`
      return yield* tell(
        [`Chamber: ${bold(inert(tenant.name))} (${tenant.public_id}), with no chamber_admin yet. Add one:`, `  ${add}`].join("\n"),
        "Chamber already set up",
        { tenant: tenant.public_id, name: tenant.name, admin: null, add_admin: add }
      )
    }
    const mint = `pnpm chamber key mint --tenant ${tenant.public_id} --as ${admin.email} --name "My key" --scopes all`
    yield* tell(
      [
        `Chamber: ${bold(inert(tenant.name))} (${tenant.public_id}), admin ${inert(admin.email)}`,
        "Keys are shown only when minted. A new one with every scope:",
        `  ${mint}`
      ].join("\n"),
      "Chamber already set up",
      { tenant: tenant.public_id, name: tenant.name, admin: admin.email, mint }
    )
  })

  let cut = 0
  const listener = NodeServerLive({
    port,
    host,
    shutdownTimeout,
    requestTimeout,
    keepAliveTimeout,
    onStopping: (inFlight) =>
      Effect.runSync(tell(inFlight === 0 ? "Stopping." : `Stopping: ${requests(inFlight)} in flight to finish (at most ${timeoutText})…`, "Stopping", {
        in_flight: inFlight,
        timeout: timeoutText
      })),
    onCut: (n) => {
      cut = n
      printError(json, new Error(`CHAMBER_SHUTDOWN_TIMEOUT (${timeoutText}) passed with ${requests(n)} unfinished: cut.`))
    }
  })

  // The webhook relay (unless --no-relay) runs beside HttpLive over the same storage. A stop closes
  // it in the same window, before the storage: sends in flight finish (within the shutdown
  // timeout), and the deliveries it still holds are given back for another relay (docs/cli.md "Stopping").
  const relay = opts.relay === false
    ? Layer.empty
    : RelayLive({ settings, listen: config._tag === "Postgres", stopTimeoutMs: Duration.toMillis(shutdownTimeout) }).pipe(Layer.provide(DeliveryStoreSql))
  // Metrics and traces (docs/operations.md "Metrics"): the server and the relay are measured, the
  // metrics listener and the readings run beside them.
  const { telemetry, readers } = observability(observed, (url) => tell(dim(`Metrics on ${url}`), "Metrics listening", { url }))
  // Stored webhook secrets this process cannot decrypt stop it before it listens (docs/webhooks.md "Secrets").
  // The change feed's events past CHAMBER_EVENT_RETENTION are pruned by every server (docs/api.md "Change feed");
  // on the embedded database, imports that stopped before publishing are discarded (docs/cli.md "While it writes").
  const app = Layer.mergeAll(
    Layer.mergeAll(HttpLive, relay, ChangesPruner(Duration.toMillis(eventRetention)), ImportSweeper()).pipe(Layer.provide(telemetry)),
    readers,
    Layer.effectDiscard(announce)
  ).pipe(
    Layer.provide(listener),
    Layer.provide(rateLimitsLayer(limits)),
    Layer.provide(Layer.succeed(IdempotencyRetention)(Duration.toMillis(idempotencyRetention))),
    Layer.provide(storedSecretsChecked(tell)),
    Layer.provide(HookPingsLive(settings)),
    Layer.provide(StorageLive(config, { exclusive: true }))
  )
  // SIGINT and SIGTERM interrupt the server, which stops gracefully: exit 0, or 1 when requests
  // were cut (docs/cli.md "Stopping"). Anything else is a failure to start.
  return runUntilStopped(Layer.launch(app).pipe(Effect.provide(logs)), json, {
    explain: (error) => startError(error, port, host),
    stopped: () => (cut === 0 ? (Effect.runSync(tell("Stopped.", "Stopped")), 0) : 1)
  })
}

const requests = (n: number) => `${n} ${n === 1 ? "request" : "requests"}`

const HOSTS = "127.0.0.1 for this machine only, 0.0.0.0 for every interface"

/** A listener's failure names the port or host and how to choose another (docs/cli.md "Serving"). */
const startError = (error: unknown, port: number, host: string): unknown => {
  if (!(error instanceof HttpServerError.ServeError)) return error
  const cause = error.cause instanceof Error ? (error.cause as NodeJS.ErrnoException) : undefined
  switch (cause?.code) {
    case "EADDRINUSE":
      return new Error(`Port ${port} is already in use on ${host}. Choose another with --port or PORT.`)
    case "EACCES":
      return new Error(`Port ${port} on ${host} needs privileges this process lacks. Choose another (1024 or above) with --port or PORT.`)
    case "EADDRNOTAVAIL":
      return new Error(`Cannot listen on host ${host}: it is not an address of this machine. Choose another with --host or HOST (${HOSTS}).`)
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return new Error(`Cannot listen on host ${host}: no such host. Choose another with --host or HOST (${HOSTS}).`)
    default:
      return new Error(`Cannot listen on ${host}:${port}: ${errorMessage(error.cause)}. Choose another port or host (--port/PORT, --host/HOST).`)
  }
}

/** The level LOG_LEVEL names, in any case (docs/cli.md "Logs"). */
const logLevel = (value: string): LogLevel.LogLevel | undefined => LogLevel.values.find((l) => l.toLowerCase() === value.toLowerCase())
