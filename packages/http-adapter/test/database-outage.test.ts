/**
 * A database that does not answer (ruling 27, docs/operations.md "When the database does not
 * answer"). PostgreSQL, with a proxy of the test's own between the server and it, cut the ways a
 * database goes away (connections refused, dropped mid-flight, accepted and never answered, a
 * restart's FATAL 57P01 and 57P03): every
 * `/api/v1` request answers 503 `{message}` with `Retry-After`, the key lookup that starts each one
 * included, `/readyz` answers 503, and a write that answered 503 did not happen; once the proxy
 * passes again, requests answer 200. A write whose COMMIT was answered answers its 2xx. The
 * embedded database, held by another process's transaction through its socket past the bounded
 * wait: the same 503s, until that transaction ends.
 */
import { afterAll, assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as References from "effect/References"
import { spawn } from "node:child_process"
import { createHash } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { StorageLive } from "@chamber/pg-adapter"
import { DatabaseConfigRef, FaultProxy, faultProxy, type ProxyMode, runtimes } from "@chamber/pg-adapter/testing"
import { HttpLive, NodeServerTest } from "../src/index.ts"
import { call, chamberWithKey, publicPings, rateLimitsAt, type Reply, SUITE_PER_MINUTE } from "./fixture.ts"

const postgres = runtimes().find((rt) => rt.name === "postgres")

/** The suite's PostgreSQL database, through a FaultProxy; a connection the proxy never answers gives up after 2 s. */
const proxiedStorage = Layer.unwrap(Effect.gen(function*() {
  const config = yield* DatabaseConfigRef
  const proxy = yield* FaultProxy
  if (config._tag !== "Postgres") return yield* Effect.die(new Error("the proxy stands before a PostgreSQL server"))
  const url = new URL(proxy.through(config.url))
  url.searchParams.set("connect_timeout", "2")
  return StorageLive({ ...config, url: url.toString() })
}))

const proxyToTheSuiteDatabase = Layer.unwrap(Effect.gen(function*() {
  const config = yield* DatabaseConfigRef
  if (config._tag !== "Postgres") return yield* Effect.die(new Error("the proxy stands before a PostgreSQL server"))
  return faultProxy(config.url)
}))

const assertUnavailable = (reply: Reply, what: string) => {
  assert.strictEqual(reply.status, 503, `${what}: ${reply.status} ${JSON.stringify(reply.body)}`)
  assert.deepStrictEqual(Object.keys(reply.body), ["message"], what)
  assert.isString(reply.body.message)
  assert.match(reply.headers["retry-after"] ?? "", /^[1-9]\d*$/, `${what}: Retry-After`)
}

/** Names of the key's chamber's members, read once the database answers again. */
const memberNames = (key: string) =>
  call("GET", "/api/v1/members", { key }).pipe(Effect.map((reply) => {
    assert.strictEqual(reply.status, 200, JSON.stringify(reply.body))
    return reply.body.data.map((m: { attributes: { name: string } }) => m.attributes.name) as Array<string>
  }))

/** `self`, then the proxy passes and cuts nothing again, whatever happened. */
const restored = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.ensuring(self, Effect.flatMap(Effect.service(FaultProxy), (proxy) => {
    proxy.cutAt(undefined)
    return proxy.set("pass")
  }))

if (postgres !== undefined) {
  describe("a PostgreSQL server that does not answer", () => {
    const server = HttpLive.pipe(
      Layer.provideMerge(NodeServerTest),
      Layer.provide(publicPings),
      Layer.provideMerge(proxiedStorage),
      Layer.provideMerge(proxyToTheSuiteDatabase),
      Layer.provide(postgres.database),
      Layer.provide(rateLimitsAt(SUITE_PER_MINUTE)),
      Layer.provide(Layer.succeed(References.MinimumLogLevel)("Error"))
    )
    layer(server, { timeout: 120_000, excludeTestServices: true })((it) => {
      /** Reads, a write, the key lookup and /readyz while the proxy is `mode`; then it passes again and each answers. */
      const whileProxy = (mode: Exclude<ProxyMode, "pass">) =>
        Effect.gen(function*() {
          const proxy = yield* FaultProxy
          const { key } = yield* chamberWithKey("members:read,members:write")
          const written = `Written while ${mode}`
          yield* proxy.set(mode)
          const [me, list, create, unknown, readyz] = yield* Effect.all([
            call("GET", "/api/v1/me", { key }),
            call("GET", "/api/v1/members", { key }),
            call("POST", "/api/v1/members", { key, body: { name: written, status: "active" } }),
            // A key's 404 counts against it, so its key is looked up too.
            call("GET", "/api/v1/no-such-collection", { key }),
            call("GET", "/readyz")
          ], { concurrency: "unbounded" })
          assertUnavailable(me, "GET /me (the key lookup)")
          assertUnavailable(list, "GET /members")
          assertUnavailable(create, "POST /members")
          assertUnavailable(unknown, "GET of an unknown /api/v1 path")
          assert.strictEqual(readyz.status, 503)
          yield* proxy.set("pass")
          assert.strictEqual((yield* call("GET", "/readyz")).status, 200)
          assert.strictEqual((yield* call("GET", "/api/v1/me", { key })).status, 200)
          assert.notInclude(yield* memberNames(key), written, "a write that answered 503 did not happen")
          assert.strictEqual((yield* call("POST", "/api/v1/members", { key, body: { name: written, status: "active" } })).status, 201)
          assert.deepStrictEqual(yield* memberNames(key), [written])
        }).pipe(restored)

      it.effect("connections refused: 503 with Retry-After for reads, writes and the key lookup, /readyz 503; 200 once it listens again", () =>
        whileProxy("refuse"))

      it.effect("connections accepted and never answered (a connect timeout): 503 with Retry-After, /readyz 503; 200 once it answers", () =>
        whileProxy("silent"))

      it.effect("a restart (open connections ended by FATAL 57P01, new ones told 57P03 starting up): 503 with Retry-After, /readyz 503; 200 once it is up", () =>
        whileProxy("restarting"))

      it.effect("a connection dropped under the key lookup, or inside a write's transaction: 503, and the write did not happen", () =>
        Effect.gen(function*() {
          const proxy = yield* FaultProxy
          const { key } = yield* chamberWithKey("members:read,members:write")
          // The key lookup sends the key's hash, the insert the member's name, as parameters.
          proxy.cutAt({ sent: createHash("sha256").update(key).digest("hex") })
          assertUnavailable(yield* call("GET", "/api/v1/me", { key }), "GET /me cut at its key lookup")
          assert.strictEqual(proxy.cuts(), 1)
          proxy.cutAt({ sent: "Cut at its insert" })
          assertUnavailable(
            yield* call("POST", "/api/v1/members", { key, body: { name: "Cut at its insert", status: "active" } }),
            "POST /members cut at its insert"
          )
          assert.strictEqual(proxy.cuts(), 1)
          assert.deepStrictEqual(yield* memberNames(key), [])
        }).pipe(restored))

      it.effect("a create whose insert's answer is lost before its row is read back: 503, and nothing was written", () =>
        Effect.gen(function*() {
          const proxy = yield* FaultProxy
          const { key } = yield* chamberWithKey("events:read,events:write")
          proxy.cutAt({ answered: "INSERT 0 1" })
          const body = { title: "Cut after its insert", starts_at: "2027-01-10T18:00:00Z" }
          assertUnavailable(yield* call("POST", "/api/v1/events", { key, body }), "POST /events cut after its insert")
          assert.strictEqual(proxy.cuts(), 1)
          const listed = yield* call("GET", "/api/v1/events", { key })
          assert.strictEqual(listed.status, 200)
          assert.deepStrictEqual(listed.body.data, [], "a create that answered 503 did not happen")
        }).pipe(restored))

      it.effect("the connection drops once COMMIT is answered: the committed write answers 201", () =>
        Effect.gen(function*() {
          const proxy = yield* FaultProxy
          const { key } = yield* chamberWithKey("members:read,members:write")
          proxy.cutAt({ answered: "COMMIT", delivered: true, farewell: true })
          const reply = yield* call("POST", "/api/v1/members", { key, body: { name: "Committed, then cut", status: "active" } })
          assert.strictEqual(proxy.cuts(), 1)
          assert.strictEqual(reply.status, 201, JSON.stringify(reply.body))
          assert.deepStrictEqual(yield* memberNames(key), ["Committed, then cut"])
        }).pipe(restored))

      it.effect("the connection drops before COMMIT's answer arrives (its outcome unknown): 503, never 500", () =>
        Effect.gen(function*() {
          const proxy = yield* FaultProxy
          const { key } = yield* chamberWithKey("members:read,members:write")
          proxy.cutAt({ answered: "COMMIT" })
          const reply = yield* call("POST", "/api/v1/members", { key, body: { name: "Committed, answer lost", status: "active" } })
          assert.strictEqual(proxy.cuts(), 1)
          assertUnavailable(reply, "POST /members whose COMMIT's answer was lost")
          // PostgreSQL committed it: the one case where a 503 may have written (docs/api.md "Errors").
          assert.deepStrictEqual(yield* memberNames(key), ["Committed, answer lost"])
        }).pipe(restored))
    })
  })
}

const HOLDER = fileURLToPath(new URL("./hold-embedded.ts", import.meta.url))

/** Another process holding the embedded database under `dataDir` in a transaction (hold-embedded.ts); `commit` ends it. Killed with the scope. */
const heldBy = (dataDir: string) =>
  Effect.gen(function*() {
    const child = yield* Effect.acquireRelease(
      Effect.sync(() => spawn(process.execPath, [HOLDER, dataDir], { stdio: ["pipe", "pipe", "inherit"] })),
      (child) => Effect.sync(() => child.kill())
    )
    let out = ""
    child.stdout.on("data", (chunk) => (out += chunk))
    const said = (word: string) =>
      Effect.promise(() =>
        new Promise<void>((resolve, reject) => {
          const check = () => out.includes(word) && resolve()
          child.stdout.on("data", check)
          child.once("exit", (code) => reject(new Error(`the holder exited (${code}) before saying ${word}: ${out}`)))
          check()
        })
      )
    yield* said("holding")
    return { commit: Effect.andThen(Effect.sync(() => child.stdin.write("commit\n")), said("committed")) }
  })

describe("the embedded database held by another process's transaction", () => {
  const dir = mkdtempSync(join(tmpdir(), "chamber-held-"))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))
  const dataDir = join(dir, "data")
  const server = HttpLive.pipe(
    Layer.provideMerge(NodeServerTest),
    Layer.provide(publicPings),
    Layer.provideMerge(StorageLive({ _tag: "Embedded", dataDir })),
    Layer.provide(rateLimitsAt(SUITE_PER_MINUTE)),
    Layer.provide(Layer.succeed(References.MinimumLogLevel)("Error"))
  )
  layer(server, { timeout: 120_000, excludeTestServices: true })((it) => {
    it.effect("past the bounded wait: 503 with Retry-After for the key lookup and a write, /readyz 503; 200 again once it commits", () =>
      Effect.gen(function*() {
        const { key } = yield* chamberWithKey("members:read,members:write")
        assert.strictEqual((yield* call("GET", "/api/v1/me", { key })).status, 200)
        const holder = yield* heldBy(dataDir)
        const written = "Written while held"
        const [me, create, readyz] = yield* Effect.all([
          call("GET", "/api/v1/me", { key }),
          call("POST", "/api/v1/members", { key, body: { name: written, status: "active" } }),
          call("GET", "/readyz")
        ], { concurrency: "unbounded" }).pipe(
          Effect.timeoutOrElse({ duration: "20 seconds", orElse: () => Effect.die(new Error("no answer within 20 s while the database is held")) })
        )
        assertUnavailable(me, "GET /me (the key lookup)")
        assertUnavailable(create, "POST /members")
        assert.strictEqual(readyz.status, 503)
        yield* holder.commit
        assert.strictEqual((yield* call("GET", "/readyz")).status, 200)
        assert.strictEqual((yield* call("GET", "/api/v1/me", { key })).status, 200)
        assert.deepStrictEqual(yield* memberNames(key), [], "a write that answered 503 did not happen")
        assert.strictEqual((yield* call("POST", "/api/v1/members", { key, body: { name: written, status: "active" } })).status, 201)
      }).pipe(Effect.scoped))
  })
})
