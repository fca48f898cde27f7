/**
 * What an operator expects of the server (docs/api.md "Health", "Request ids and logs",
 * "Documentation"), over a real socket on every storage runtime: health and readiness without
 * a key, request ids kept or made, one access-log line per request that never holds a key or a
 * secret query value, `WWW-Authenticate` on a 401, and the docs served compressed with an ETag.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import { StorageLive } from "@chamber/pg-adapter"
import { DatabaseConfigRef, postgresOnly, type Runtime, runtimes } from "@chamber/pg-adapter/testing"
import pg from "pg"
import { brotliDecompressSync, gunzipSync } from "node:zlib"
import { HttpLive, NodeServerTest } from "../src/index.ts"
import { call, chamberWithKey, publicPings, rateLimitsAt, serverUrl, SUITE_PER_MINUTE } from "./fixture.ts"
import { rawExchange, rawRequest } from "./raw.ts"

/** Every log line the server writes, as the JSON objects `LOG_FORMAT=json` prints. */
const lines: Array<Record<string, unknown>> = []
const CaptureLogs = Logger.layer([Logger.map(Logger.formatStructured, (line) => void lines.push(JSON.parse(JSON.stringify(line))))])

/** The server on a fresh database of the runtime, which a test may also reach (to drop it). */
const server = (rt: Runtime) =>
  Layer.unwrap(Effect.gen(function*() {
    const config = yield* DatabaseConfigRef
    return HttpLive.pipe(
      Layer.provideMerge(NodeServerTest),
      Layer.provide(publicPings),
      Layer.provideMerge(StorageLive(config)),
      Layer.provideMerge(Layer.succeed(DatabaseConfigRef)(config)),
      Layer.provide(rateLimitsAt(SUITE_PER_MINUTE)),
      Layer.provide(CaptureLogs)
    )
  })).pipe(Layer.provide(rt.database))

const raw = (options: Parameters<typeof rawRequest>[0]) =>
  Effect.flatMap(serverUrl, (url) => rawExchange(Number(new URL(url).port), rawRequest(options)))

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

for (const rt of runtimes()) {
  describe(`operating the server on ${rt.name}`, () => {
    layer(server(rt), { timeout: 120_000 })((it) => {
      it.effect("GET /healthz and /readyz answer without a key", () =>
        Effect.gen(function*() {
          const health = yield* call("GET", "/healthz")
          assert.deepStrictEqual([health.status, health.body], [200, { status: "ok" }])
          const ready = yield* call("GET", "/readyz")
          assert.deepStrictEqual([ready.status, ready.body], [200, { status: "ready" }])
          assert.strictEqual((yield* call("POST", "/healthz")).status, 404)
        }))

      it.effect("every response carries X-Request-Id: a well-formed incoming one is kept, otherwise a new one", () =>
        Effect.gen(function*() {
          const { key } = yield* chamberWithKey("members:read")
          const kept = yield* call("GET", "/api/v1/members", { key, headers: { "x-request-id": "trace-42.a:b_c" } })
          assert.strictEqual(kept.headers["x-request-id"], "trace-42.a:b_c")
          for (const bad of ["has spaces", "x".repeat(129), "semi;colon"]) {
            const made = yield* call("GET", "/api/v1/members", { key, headers: { "x-request-id": bad } })
            assert.match(made.headers["x-request-id"] ?? "", UUID, bad)
          }
          const ids = new Set<string>()
          for (const [method, path, k] of [["GET", "/api/v1/me", undefined], ["GET", "/api/v1/nope", key], ["DELETE", "/api/v1/me", key], ["GET", "/api/v1/members?page=0", key], ["GET", "/healthz", undefined]] as const) {
            const reply = yield* call(method, path, k === undefined ? {} : { key: k })
            assert.match(reply.headers["x-request-id"] ?? "", UUID, `${method} ${path} ${reply.status}`)
            ids.add(reply.headers["x-request-id"]!)
          }
          assert.strictEqual(ids.size, 5)
        }))

      it.effect("a 401 carries WWW-Authenticate: Bearer and the same body; other answers do not", () =>
        Effect.gen(function*() {
          const { key } = yield* chamberWithKey("members:read")
          for (const k of [undefined, "cck_nope"]) {
            const reply = yield* call("GET", "/api/v1/members", k === undefined ? {} : { key: k })
            assert.deepStrictEqual([reply.status, reply.headers["www-authenticate"], reply.body], [401, "Bearer", { message: "Unauthenticated." }])
          }
          assert.isUndefined((yield* call("GET", "/api/v1/members", { key })).headers["www-authenticate"])
          assert.isUndefined((yield* call("POST", "/api/v1/members", { key, body: {} })).headers["www-authenticate"])
        }))

      it.effect("one access-log line per request: method, path with secret values hidden, status, duration, request id, key prefix; never the key", () =>
        Effect.gen(function*() {
          const { key, minted } = yield* chamberWithKey("members:read")
          const before = lines.length
          const reply = yield* call("GET", "/api/v1/members?page=1&api_key=SECRET123&access_token=abc987&name=visible", {
            key,
            headers: { "x-request-id": "log-check-1" }
          })
          assert.strictEqual(reply.status, 200)
          const mine = lines.slice(before).filter((l) => (l.annotations as Record<string, unknown>).request_id === "log-check-1")
          assert.strictEqual(mine.length, 1, JSON.stringify(lines.slice(before)))
          const line = mine[0]!
          assert.strictEqual(line.message, "request")
          assert.strictEqual(line.level, "INFO")
          const { duration_ms, ...rest } = line.annotations as Record<string, unknown>
          assert.deepStrictEqual(rest, {
            request_id: "log-check-1",
            method: "GET",
            path: "/api/v1/members?page=1&api_key=[redacted]&access_token=[redacted]&name=visible",
            status: 200,
            key_prefix: minted.prefix
          })
          assert.isTrue(typeof duration_ms === "number" && duration_ms >= 0)
          const all = JSON.stringify(lines)
          for (const secret of [key, "SECRET123", "abc987"]) assert.notInclude(all, secret)
          // A refused request is logged too, without a key prefix.
          yield* call("GET", "/api/v1/members", { key: "cck_nope", headers: { "x-request-id": "log-check-2" } })
          const refused = lines.find((l) => (l.annotations as Record<string, unknown>).request_id === "log-check-2")
          assert.deepInclude(refused?.annotations as object, { status: 401, key_prefix: null })
        }))

      it.effect("/docs and the OpenAPI document: compressed when accepted, with an ETag that answers 304", () =>
        Effect.gen(function*() {
          for (const path of ["/docs", "/api/v1/openapi.json"]) {
            const plain = yield* raw({ method: "GET", path })
            assert.strictEqual(plain.status, 200, path)
            assert.isUndefined(plain.headers["content-encoding"], path)
            const etag = plain.headers["etag"]
            assert.match(etag ?? "", /^"[A-Za-z0-9_-]+"$/, path)
            for (const [encoding, decode] of [["br", brotliDecompressSync], ["gzip", gunzipSync]] as const) {
              const reply = yield* Effect.flatMap(serverUrl, (url) =>
                rawExchange(Number(new URL(url).port), rawRequest({ method: "GET", path, headers: [["Accept-Encoding", `${encoding}, deflate`]] }))
              )
              assert.strictEqual(reply.headers["content-encoding"], encoding, path)
              assert.strictEqual(reply.headers["etag"], etag)
              assert.strictEqual(reply.headers["vary"], "Accept-Encoding")
              const compressed = Number(reply.headers["content-length"])
              assert.isBelow(compressed, Buffer.byteLength(plain.body) / 3, `${path} ${encoding}: ${compressed} bytes`)
            }
            const fresh = yield* raw({ method: "GET", path, headers: [["If-None-Match", etag!]] })
            assert.deepStrictEqual([fresh.status, fresh.body], [304, ""], path)
          }
        }))
    })
  })
}

for (const postgres of postgresOnly("readiness when the database goes away")) {
  describe("readiness when the database goes away", () => {
    layer(server(postgres), { timeout: 120_000 })((it) => {
      it.effect("GET /readyz answers 503 {message} within a few seconds once the database is gone; /healthz still 200", () =>
        Effect.gen(function*() {
          assert.strictEqual((yield* call("GET", "/readyz")).status, 200)
          const config = yield* DatabaseConfigRef
          if (config._tag !== "Postgres") return
          const url = new URL(config.url)
          const name = url.pathname.slice(1)
          url.pathname = "/postgres"
          yield* Effect.promise(async () => {
            const admin = new pg.Client({ connectionString: url.toString() })
            await admin.connect()
            await admin.query(`DROP DATABASE ${name} WITH (FORCE)`)
            await admin.end()
          })
          const started = Date.now()
          const ready = yield* call("GET", "/readyz")
          assert.deepStrictEqual([ready.status, ready.body], [503, { message: "The database does not answer." }])
          assert.isBelow(Date.now() - started, 5_000)
          assert.strictEqual((yield* call("GET", "/healthz")).status, 200)
        }))
    })
  })
}
