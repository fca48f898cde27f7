/**
 * The admin TUI's data over the real services (docs/admin.md): core Tenants and Keys, the
 * rate-limit store for today's use, WebhookAdmin for subscriptions and deliveries; on PostgreSQL
 * or the embedded database, through the running server's socket when `serve` owns it
 * (docs/cli.md "The embedded database while the server runs").
 *
 * A database that goes away: every call has a time limit; a call that cannot reach the database
 * rejects with DataError("unavailable") and the services are built afresh at the next call. On
 * the embedded database a TUI that came in through a server's socket never takes the database
 * over: it waits for a server to own it again, so that server can start.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import * as References from "effect/References"
import * as SqlError from "effect/sql/SqlError"
import { Keys, type Limits, rateLimitKey, Tenants, WebhookAdmin } from "@chamber/core"
import { type DatabaseConfig, embeddedOwner, StorageLive, WebhookAdminSql } from "@chamber/pg-adapter"
import { type RateLimitSettings, redisStore, usageOf } from "../RateLimits.ts"
import { rotateHookSecret } from "../RotateSecret.ts"
import { keyView } from "../Views.ts"
import { type AdminData, DataError, type HookRow, type KeyRow } from "./AdminData.ts"

/** The sparkline's length: the latest attempts of a subscription (docs/admin.md "Subscriptions"). */
export const RECENT_ATTEMPTS = 20
const REPLAY_CHUNK = 50

const servicesLayer = (config: DatabaseConfig, settings: RateLimitSettings) => {
  const base = Layer.mergeAll(
    WebhookAdminSql.pipe(Layer.provideMerge(StorageLive(config))),
    // Log lines would tear the screen: the TUI says what went wrong on its status line instead.
    Layer.succeed(References.MinimumLogLevel)("None")
  )
  return settings.redisUrl === undefined ? base : Layer.merge(base, redisStore(settings.redisUrl))
}

type Services = Layer.Success<ReturnType<typeof servicesLayer>>

/** The reason a database error gives, in one line. */
const reasonOf = (error: unknown): string => {
  const inner = SqlError.isSqlError(error) ? error.cause : undefined
  const text = [error instanceof Error ? error.message : String(error), inner instanceof Error ? inner.cause : undefined]
    .map((e) => (e instanceof Error ? e.message : typeof e === "string" ? e : ""))
    .filter((m) => m !== "")
  return [...new Set(text)].join(": ").split("\n")[0]!
}

const isUnreachable = (error: unknown): boolean =>
  SqlError.isSqlError(error) ||
  (error instanceof Error && /ECONNREFUSED|ECONNRESET|ENOENT|EPIPE|ETIMEDOUT|EHOSTUNREACH|socket|connect|terminat/i.test(error.message))

export interface AdminDataLiveOptions {
  /** How long a call may take before the database counts as not answering (default 5 s). */
  readonly timeoutMs?: number
}

export const adminDataLive = (config: DatabaseConfig, settings: RateLimitSettings, options: AdminDataLiveOptions = {}): AdminData => {
  const timeoutMs = options.timeoutMs ?? 5_000
  const dataDir = config._tag === "Embedded" ? config.dataDir : undefined
  let runtime: ManagedRuntime.ManagedRuntime<Services, unknown> | undefined
  /** Embedded: this process reached the database through another's socket. */
  let throughSocket = false
  let closed = false

  const discard = (r: ManagedRuntime.ManagedRuntime<Services, unknown>) => {
    if (runtime === r) runtime = undefined
    void Promise.race([r.dispose(), new Promise((resolve) => setTimeout(resolve, 2_000))]).catch(() => undefined)
  }

  const runtimeNow = () => {
    if (closed) throw new DataError("unexpected", "The TUI is closing.")
    if (runtime !== undefined) return runtime
    if (dataDir !== undefined && throughSocket && embeddedOwner(dataDir) === undefined) {
      throw new DataError("unavailable", `no chamber serve owns the embedded database at ${dataDir} any more`)
    }
    runtime = ManagedRuntime.make(servicesLayer(config, settings))
    return runtime
  }

  const call = async <A, E>(effect: Effect.Effect<A, E, Services>): Promise<A> => {
    const r = runtimeNow()
    const abort = new AbortController()
    const timer = setTimeout(() => abort.abort(), timeoutMs)
    const exit = await r.runPromiseExit(effect, { signal: abort.signal }).finally(() => clearTimeout(timer))
    if (Exit.isSuccess(exit)) {
      if (dataDir !== undefined && !throughSocket) throughSocket = embeddedOwner(dataDir) !== undefined
      return exit.value
    }
    const built = r.cachedContext !== undefined
    let error: DataError
    if (abort.signal.aborted) error = new DataError("unavailable", `no answer within ${timeoutMs / 1000} s`)
    else {
      const failure = Cause.findErrorOption(exit.cause)
      const problem = Option.isSome(failure) ? failure.value : Cause.squash(exit.cause)
      if (!built || isUnreachable(problem)) error = new DataError("unavailable", reasonOf(problem))
      else if (Option.isSome(failure)) error = new DataError("refused", reasonOf(problem))
      else error = new DataError("unexpected", reasonOf(problem))
    }
    if (error.kind === "unavailable") discard(r)
    throw error
  }

  /** Requests in the key's rolling 24 hours: what `chamber key usage` reads (docs/cli.md); null when the store does not answer. */
  const usage = (chamber: string, keyId: number, limits: Limits) =>
    usageOf(settings, rateLimitKey(chamber, keyId), limits).pipe(
      Effect.map((v): number | null => v.day.used),
      Effect.catchCause(() => Effect.succeed(null))
    )

  return {
    tenants: () =>
      call(Effect.gen(function*() {
        const all = yield* (yield* Tenants).list
        return all.map((t) => ({ id: t.public_id, name: t.name, created_at: t.created_at }))
      })),

    admins: (tenant) =>
      call(Effect.gen(function*() {
        const people = yield* (yield* Tenants).listUsers(tenant)
        return people.filter((u) => u.role === "chamber_admin").map((u) => u.email)
      })),

    keys: (tenant) =>
      call(Effect.gen(function*() {
        const chamber = yield* (yield* Tenants).get(tenant)
        const keys = yield* (yield* Keys).list(chamber.id)
        return yield* Effect.forEach(keys, (k) =>
          Effect.map(
            k.revoked_at !== null ? Effect.succeed(null) : usage(chamber.public_id, k.id, { perMinute: settings.perMinute, daily: k.daily_limit }),
            (used_today): KeyRow => ({ ...keyView(k), used_today })
          ), { concurrency: 4 })
      })),

    mintKey: (request) =>
      call(Effect.gen(function*() {
        const minted = yield* (yield* Keys).mint({
          tenant: request.tenant,
          asEmail: request.asEmail,
          name: request.name,
          scopes: request.scopes.join(","),
          dailyLimit: request.dailyLimit
        })
        return { name: minted.name, prefix: minted.prefix, scopes: minted.scopes, key: minted.key }
      })),

    revokeKey: (prefix) => call(Effect.asVoid(Effect.flatMap(Effect.service(Keys), (k) => k.revoke(prefix)))),

    hooks: (tenant) =>
      call(Effect.gen(function*() {
        const admin = yield* WebhookAdmin
        const [hooks, recent] = yield* Effect.all([admin.hooks(tenant), admin.recentAttempts(tenant, RECENT_ATTEMPTS)])
        const byHook = new Map(recent.map((r) => [r.hook_id, r.ok]))
        return hooks.map((h): HookRow => ({ ...h, recent: byHook.get(h.id) ?? [] }))
      })),

    reactivate: async (ids, progress) => {
      let found = 0
      for (const [i, id] of ids.entries()) {
        if (await call(Effect.flatMap(Effect.service(WebhookAdmin), (a) => a.reactivate(id)))) found++
        progress?.(i + 1, ids.length)
      }
      return found
    },

    deliveries: (query) =>
      call(Effect.flatMap(Effect.service(WebhookAdmin), (a) =>
        a.deliveries({ tenant: query.tenant, status: query.status, hookId: query.hookId, ids: query.ids, limit: query.ids?.length ?? 100 }))),

    failedDeliveries: (query) =>
      call(Effect.flatMap(Effect.service(WebhookAdmin), (a) =>
        a.deliveries({ tenant: query.tenant, hookId: query.hookId, status: "failed", since: query.since, limit: 100_000 }))).then((ds) =>
          ds.map((d) => d.id)
        ),

    backlog: (tenant) =>
      call(Effect.gen(function*() {
        const admin = yield* WebhookAdmin
        const [subscriptions, total] = yield* Effect.all([admin.backlogOf(tenant), admin.backlog])
        return { subscriptions, total }
      })),

    replay: async (ids, progress) => {
      const replayed: Array<number> = []
      for (let i = 0; i < ids.length; i += REPLAY_CHUNK) {
        const chunk = ids.slice(i, i + REPLAY_CHUNK)
        replayed.push(...await call(Effect.flatMap(Effect.service(WebhookAdmin), (a) => a.replay(chunk))))
        progress?.(Math.min(i + REPLAY_CHUNK, ids.length), ids.length)
      }
      return { replayed, skipped: ids.filter((id) => !replayed.includes(id)) }
    },

    rotateSecret: (hookId) => call(rotateHookSecret(hookId)),

    close: async () => {
      closed = true
      const r = runtime
      runtime = undefined
      if (r !== undefined) await Promise.race([r.dispose(), new Promise((resolve) => setTimeout(resolve, 3_000))])
    }
  }
}
