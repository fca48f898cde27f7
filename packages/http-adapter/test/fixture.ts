/**
 * The HTTP suites' fixture: the real server on a real socket (port 0) over a fresh database of
 * each storage runtime, plus helpers to make chambers and keys through the core services.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as References from "effect/References"
import * as HttpBody from "effect/http/HttpBody"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as HttpServer from "effect/http/HttpServer"
import { Keys, MemoryRateLimitStore, type RateLimitStore, Tenants } from "@chamber/core"
import { StorageLive } from "@chamber/pg-adapter"
import { onDatabase, type Runtime } from "@chamber/pg-adapter/testing"
import { HookPingsLive } from "@chamber/webhook-relay"
import { HttpLive, NodeServerTest, RateLimitPerMinute } from "../src/index.ts"

/**
 * Suites make far more than 120 requests a minute with one key; rate-limits.test.ts holds the
 * spec's limit. The daily ceiling is each key's own (25,000 by default) everywhere.
 */
export const SUITE_PER_MINUTE = 100_000

/** The in-process rate-limit store at `perMinute` a key. */
export const rateLimitsAt = (perMinute: number) =>
  Layer.merge(MemoryRateLimitStore, Layer.succeed(RateLimitPerMinute)(perMinute))

/**
 * Pings as `chamber serve` makes them by default: destinations must be public (none is reachable
 * here), 10 s at most. Suites that ping a receiver of their own give theirs (hooks-self-service.test.ts).
 */
export const publicPings = HookPingsLive({ timeoutMs: 10_000, allowPrivate: false })

/**
 * The real server on `listener` (an HttpServer on a socket) over a fresh database of `rt`,
 * limiting with `rateLimits`, pinging with `pings`; its access log (one Info line per request) is not printed.
 */
export const serverListeningOn = <ROut, E>(
  listener: Layer.Layer<ROut | HttpServer.HttpServer, E>,
  rt: Runtime,
  rateLimits: Layer.Layer<RateLimitStore> = rateLimitsAt(SUITE_PER_MINUTE),
  pings: typeof publicPings = publicPings
) =>
  HttpLive.pipe(
    Layer.provideMerge(listener),
    Layer.provideMerge(pings),
    Layer.provideMerge(onDatabase(rt, (config) => StorageLive(config))),
    Layer.provide(rateLimits),
    Layer.provide(Layer.succeed(References.MinimumLogLevel)("Warn"))
  )

/** The real server on a free port with a client pointed at it (`call`), over a fresh database of `rt`. */
export const serverOn = (rt: Runtime, rateLimits: Layer.Layer<RateLimitStore> = rateLimitsAt(SUITE_PER_MINUTE)) =>
  serverListeningOn(NodeServerTest, rt, rateLimits)

let counter = 0

/** A chamber with an admin and a key holding `scopes`. */
export const chamberWithKey = (scopes: string, name?: string) =>
  Effect.gen(function*() {
    const tenants = yield* Tenants
    const keys = yield* Keys
    const tenant = yield* tenants.create({ name: name ?? `Chamber ${++counter}`, website: "https://chamber.example" })
    yield* tenants.addUser(tenant.id, "admin@chamber.example", "chamber_admin")
    const minted = yield* keys.mint({ tenant: tenant.id, asEmail: "admin@chamber.example", name: "Test key", scopes })
    return { tenant, key: minted.key, minted }
  }).pipe(Effect.orDie)

/** Another key on an existing chamber. */
export const anotherKey = (tenantId: number, scopes: string) =>
  Effect.gen(function*() {
    const keys = yield* Keys
    return (yield* keys.mint({ tenant: tenantId, asEmail: "admin@chamber.example", name: `Key ${++counter}`, scopes })).key
  }).pipe(Effect.orDie)

export interface Reply {
  readonly status: number
  readonly headers: Record<string, string>
  readonly body: any
  /** The body as it came, before JSON parsing. */
  readonly text: string
}

const read = (response: HttpClientResponse.HttpClientResponse) =>
  Effect.gen(function*() {
    const text = yield* response.text
    let body: unknown = text
    try {
      body = text === "" ? undefined : JSON.parse(text)
    } catch {
      body = text
    }
    const reply: Reply = { status: response.status, headers: response.headers as Record<string, string>, body, text }
    return reply
  })

/**
 * A raw request: `body` is JSON-encoded unless it is a string (sent as is). `headers` are set
 * last, so they can override the bearer header (an `authorization` of another scheme, say).
 */
export const call = (
  method: "GET" | "POST" | "PATCH" | "PUT" | "DELETE",
  path: string,
  options: {
    readonly key?: string
    readonly body?: unknown
    readonly contentType?: string
    readonly headers?: Record<string, string>
  } = {}
) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    let request = HttpClientRequest.make(method)(path)
    if (options.key !== undefined) request = HttpClientRequest.bearerToken(request, options.key)
    if (options.body !== undefined) {
      const text = typeof options.body === "string" ? options.body : JSON.stringify(options.body)
      request = HttpClientRequest.setBody(request, HttpBody.text(text, options.contentType ?? "application/json"))
    }
    if (options.headers !== undefined) request = HttpClientRequest.setHeaders(request, options.headers)
    return yield* read(yield* client.execute(request))
  }).pipe(Effect.scoped, Effect.orDie)

/** The test server's own address, `http://127.0.0.1:<port>`, for clients other than `call`. */
export const serverUrl = Effect.gen(function*() {
  const address = (yield* HttpServer.HttpServer).address
  if (address._tag === "UnixPathAddress") return yield* Effect.die(new Error("the test server listens on a TCP port"))
  return `http://127.0.0.1:${address.port}`
})
