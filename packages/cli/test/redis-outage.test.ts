/**
 * Every request answered while Redis goes away and comes back (docs/operations.md "When Redis is
 * unreachable"), on the documented deployment: real `chamber serve` processes on PostgreSQL with
 * REDIS_URL pointing at a Redis of the test's own (never the shared one), under a load of mostly
 * writes over keep-alive connections. Redis killed with SIGKILL and started again; a proxy that
 * accepts the rate-limit commands in flight, never answers them, then closes. Every request gets
 * a whole HTTP response (2xx, or a 429/503 in JSON), never a closed connection; every 201 is a
 * committed member and nothing else is; once Redis is back the limits are shared again.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as http from "node:http"
import { postgresOnly } from "@chamber/pg-adapter/testing"
import { redisProxy, redisServer } from "@chamber/redis-adapter/testing"
import { chamber, envLayer, json, type Serving, serving } from "./harness.ts"

/** A chamber with a key of every scope, and a second key of its own with a daily limit of `capped`. */
const keysOf = (label: string, capped: number) =>
  Effect.gen(function*() {
    const tenant = json(yield* chamber(["tenant", "create", "--name", label, "--json"]))
    json(yield* chamber(["user", "add", "--tenant", tenant.id, "--email", "ops@outage.example", "--role", "chamber_admin", "--json"]))
    const mint = (extra: ReadonlyArray<string>) =>
      Effect.map(
        chamber(["key", "mint", "--tenant", tenant.id, "--as", "ops@outage.example", "--name", "k", "--scopes", "all", "--json", ...extra]),
        (r) => json(r).key as string
      )
    return { key: yield* mint([]), capped: yield* mint(["--daily-limit", String(capped)]) }
  })

/** What became of one request: a whole response, or what the connection did instead. */
type Outcome =
  | { readonly kind: "answered"; readonly method: string; readonly status: number; readonly body: string }
  | { readonly kind: "lost"; readonly method: string; readonly error: string }

/** Keep-alive connections, as a load balancer or an integrator's client holds them. */
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 })

const send = (port: number, method: "GET" | "POST", path: string, key: string, body?: unknown) =>
  new Promise<Outcome>((resolve) => {
    const payload = body === undefined ? undefined : JSON.stringify(body)
    const request = http.request({
      host: "127.0.0.1",
      port,
      method,
      path,
      agent,
      headers: { authorization: `Bearer ${key}`, ...(payload === undefined ? {} : { "content-type": "application/json" }) }
    }, (response) => {
      let text = ""
      response.setEncoding("utf8")
      response.on("data", (chunk: string) => (text += chunk))
      response.on("end", () => resolve({ kind: "answered", method, status: response.statusCode ?? 0, body: text }))
      response.on("error", (error) => resolve({ kind: "lost", method, error: `${error.message} (mid-response)` }))
    })
    request.on("error", (error: NodeJS.ErrnoException) => resolve({ kind: "lost", method, error: `${error.code ?? ""} ${error.message}` }))
    request.end(payload)
  })

/**
 * `workers` clients, each sending one request after another to the servers in turn (four member
 * creations to one GET /me) until `stop` is called; resolves with every outcome.
 */
const load = (servers: ReadonlyArray<Serving>, key: string, workers: number) => {
  let stopped = false
  let sent = 0
  const outcomes: Array<Outcome> = []
  const worker = async () => {
    while (!stopped) {
      const n = sent++
      const port = servers[n % servers.length]!.port
      outcomes.push(
        await (n % 5 === 4
          ? send(port, "GET", "/api/v1/me", key)
          : send(port, "POST", "/api/v1/members", key, { name: `Outage ${n}`, status: "active" }))
      )
    }
  }
  const running = Promise.all(Array.from({ length: workers }, worker))
  return {
    count: () => outcomes.length,
    stop: () => {
      stopped = true
      return running.then(() => outcomes)
    }
  }
}

/** Every outcome a whole response: 2xx, or 429/503 with a JSON `{message}`; the failures listed otherwise. */
const assertAllAnswered = (outcomes: ReadonlyArray<Outcome>) => {
  const wrong = outcomes.filter((o) => {
    if (o.kind === "lost") return true
    if (o.status >= 200 && o.status < 300) return false
    if (o.status !== 429 && o.status !== 503) return true
    try {
      return typeof JSON.parse(o.body).message !== "string"
    } catch {
      return true
    }
  })
  assert.deepStrictEqual(wrong.slice(0, 10), [], `${wrong.length} of ${outcomes.length} requests not answered whole`)
}

const created = (outcomes: ReadonlyArray<Outcome>) => outcomes.filter((o) => o.kind === "answered" && o.method === "POST" && o.status === 201).length

/** How many members the chamber of `key` holds, as the API lists them. */
const membersOf = (port: number, key: string) =>
  Effect.promise(async () => {
    const o = await send(port, "GET", "/api/v1/members", key)
    assert.strictEqual(o.kind === "answered" && o.status, 200)
    return JSON.parse((o as { body: string }).body).meta.total as number
  })

/** Waits until at least `n` more requests have been answered than now. */
const whileLoaded = (running: ReturnType<typeof load>, n: number) =>
  Effect.promise(async () => {
    const until = running.count() + n
    for (const deadline = Date.now() + 60_000; running.count() < until && Date.now() < deadline;) await new Promise((r) => setTimeout(r, 10))
  })

const BACK = /Redis answers again/g
const backCount = (s: Serving) => (s.stdout() + s.stderr()).match(BACK)?.length ?? 0

/** Waits until each server has said it is back on Redis `times` times. */
const allBack = (servers: ReadonlyArray<Serving>, times: number) =>
  Effect.promise(async () => {
    for (const deadline = Date.now() + 30_000; Date.now() < deadline;) {
      if (servers.every((s) => backCount(s) >= times)) return
      await new Promise((r) => setTimeout(r, 50))
    }
    throw new Error(`not back on Redis: ${servers.map((s) => s.stdout() + s.stderr()).join("\n").slice(-3000)}`)
  })

/** `n` GET /me of `key`, alternating between the servers, one after another: their statuses. */
const statuses = (servers: ReadonlyArray<Serving>, key: string, n: number) =>
  Effect.promise(async () => {
    const out: Array<number> = []
    for (let i = 0; i < n; i++) {
      const o = await send(servers[i % servers.length]!.port, "GET", "/api/v1/me", key)
      out.push(o.kind === "answered" ? o.status : -1)
    }
    return out
  })

// The load would otherwise meet the spec's 120 a minute.
const LIMIT = { CHAMBER_RATE_LIMIT_PER_MINUTE: "1000000" }

for (const rt of postgresOnly("requests while Redis goes away on postgres")) {
  describe(`requests while Redis goes away on ${rt.name}`, () => {
    layer(envLayer(rt), { timeout: 180_000, excludeTestServices: true })((it) => {
      it.effect("two servers, Redis killed and restarted under write load: every request answered, every 201 committed, limits shared again", () =>
        Effect.gen(function*() {
          const redis = yield* Effect.acquireRelease(Effect.promise(redisServer), (r) => Effect.promise(r.kill))
          const env = { ...LIMIT, REDIS_URL: redis.url }
          const { key, capped } = yield* keysOf("Outage chamber", 6)
          const a = yield* serving(["--no-relay"], env)
          const b = yield* serving(["--no-relay"], env)

          const running = load([a, b], key, 16)
          yield* whileLoaded(running, 100)
          yield* Effect.promise(redis.kill)
          yield* whileLoaded(running, 150)
          yield* Effect.promise(redis.start)
          yield* allBack([a, b], 1)
          yield* whileLoaded(running, 100)
          const outcomes = yield* Effect.promise(running.stop)

          assertAllAnswered(outcomes)
          assert.isAbove(outcomes.length, 350)
          assert.strictEqual(yield* membersOf(a.port, key), created(outcomes), "every 201 committed, nothing else")
          for (const s of [a, b]) assert.match(s.stdout() + s.stderr(), /rate limits: Redis does not answer/)

          // Shared again: six a day between both servers, not six on each.
          const replies = yield* statuses([a, b], capped, 12)
          assert.deepStrictEqual(replies, [200, 200, 200, 200, 200, 200, 429, 429, 429, 429, 429, 429])
        }), 170_000)

      it.effect("rate-limit commands in flight when Redis goes silent, then closes: their requests are answered, and the limits come back", () =>
        Effect.gen(function*() {
          const redis = yield* Effect.acquireRelease(Effect.promise(redisServer), (r) => Effect.promise(r.kill))
          const proxy = yield* Effect.acquireRelease(Effect.promise(() => redisProxy(redis.url)), (p) => Effect.promise(p.close))
          const { key, capped } = yield* keysOf("Silent chamber", 4)
          const a = yield* serving(["--no-relay"], { ...LIMIT, REDIS_URL: proxy.url })
          const b = yield* serving(["--no-relay"], { ...LIMIT, REDIS_URL: proxy.url })

          const running = load([a, b], key, 16)
          yield* whileLoaded(running, 100)
          // Redis takes the commands and answers nothing; the connections close while they wait.
          proxy.swallow()
          const swallowed = proxy.swallowedBytes()
          yield* Effect.promise(async () => {
            for (const deadline = Date.now() + 30_000; proxy.swallowedBytes() === swallowed && Date.now() < deadline;) {
              await new Promise((r) => setTimeout(r, 2))
            }
          })
          assert.isAbove(proxy.swallowedBytes(), swallowed, "rate-limit commands were in flight")
          proxy.cut()
          yield* whileLoaded(running, 50)
          // Silent again until the servers have given up connections that got no answer (new ones
          // opened to the proxy), then back.
          proxy.swallow()
          const opened = proxy.connections()
          yield* Effect.promise(async () => {
            for (const deadline = Date.now() + 30_000; proxy.connections() < opened + 2 && Date.now() < deadline;) {
              await new Promise((r) => setTimeout(r, 10))
            }
          })
          assert.isAtLeast(proxy.connections(), opened + 2, "the silent connections were given up")
          yield* whileLoaded(running, 50)
          proxy.pass()
          yield* allBack([a, b], 1)
          yield* whileLoaded(running, 100)
          const outcomes = yield* Effect.promise(running.stop)

          assertAllAnswered(outcomes)
          assert.strictEqual(yield* membersOf(a.port, key), created(outcomes), "every 201 committed, nothing else")
          const replies = yield* statuses([a, b], capped, 8)
          assert.deepStrictEqual(replies, [200, 200, 200, 200, 429, 429, 429, 429], "four a day between both servers")
        }), 170_000)
    })
  })
}
