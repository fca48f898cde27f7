/**
 * Redis going away and coming back (docs/operations.md "When Redis is unreachable"), on a Redis
 * server of the test's own on a spare port: requests go on being answered, limited by this
 * instance alone; the outage is logged once; when Redis is back the store uses it again by itself
 * and says so once.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as Logger from "effect/Logger"
import * as Scope from "effect/Scope"
import { type ChildProcess, spawn } from "node:child_process"
import { createServer } from "node:net"
import type { Limits } from "@chamber/core"
import { makeRedisStore } from "../src/index.ts"

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer()
    s.listen(0, "127.0.0.1", () => {
      const address = s.address()
      s.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0))
    })
  })

/** `redis-server` on `port`, keeping nothing on disk; resolves once it accepts connections. */
const startRedis = (port: number) =>
  new Promise<ChildProcess>((resolve, reject) => {
    const child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
    let out = ""
    child.on("error", (error) => reject(new Error(`redis-server could not start (it must be installed for this suite): ${error.message}`)))
    child.stdout!.on("data", (d) => {
      out += d
      if (out.includes("Ready to accept connections")) resolve(child)
    })
    child.on("exit", (code) => reject(new Error(`redis-server exited (${code}): ${out}`)))
  })

const stop = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    child.on("exit", () => resolve())
    child.kill("SIGKILL")
  })

/** chamber_redis_errors_total as /metrics reports it. */
const redisErrors = Effect.map(Metric.snapshot, (all) =>
  all.filter((m) => m.id === "chamber_redis_errors_total").reduce((sum, m) => sum + Number((m.state as { readonly count: number }).count), 0))

const LIMITS: Limits = { perMinute: 10, daily: 1_000 }

describe("the Redis rate-limit store when Redis goes away", () => {
  const lines: Array<string> = []
  const capture = Logger.layer([Logger.map(Logger.formatSimple, (line) => void lines.push(String(line)))])

  it.live("answers throughout, limits on its own while Redis is down, logs each change once, and goes back by itself", () =>
    Effect.gen(function*() {
      const port = yield* Effect.promise(freePort)
      let redis = yield* Effect.promise(() => startRedis(port))
      yield* Effect.addFinalizer(() => Effect.promise(() => stop(redis)))
      const url = `redis://127.0.0.1:${port}`
      const scope = yield* Effect.scope
      const store = yield* makeRedisStore({ url, timeoutMs: 250 }).pipe(Scope.provide(scope))
      // A second instance sharing the Redis server: what it sees is what Redis holds.
      const other = yield* makeRedisStore({ url, timeoutMs: 250, failOpen: false }).pipe(Scope.provide(scope))
      const key = `outage-${Date.now()}`

      for (let i = 0; i < 3; i++) assert.isTrue((yield* store.hit(key, LIMITS)).admitted)
      assert.strictEqual((yield* other.peek(key, LIMITS)).minute.used, 3, "counted in Redis")

      const errorsBefore = yield* redisErrors
      yield* Effect.promise(() => stop(redis))
      const during = []
      for (let i = 0; i < 15; i++) during.push(yield* store.hit(key, LIMITS))
      assert.strictEqual((yield* redisErrors) - errorsBefore, 15, "each check Redis did not answer is counted (chamber_redis_errors_total)")
      assert.strictEqual(during.filter((v) => v.admitted).length, 10, "this instance alone holds the per-minute limit")
      assert.isAbove(during.at(-1)!.retryAfterMs, 0)
      const warnings = lines.filter((l) => l.includes("Redis does not answer"))
      assert.strictEqual(warnings.length, 1, `logged once per outage: ${lines.join("\n")}`)

      redis = yield* Effect.promise(() => startRedis(port))
      // The client reconnects on its own (backing off up to 2 s); requests are answered meanwhile.
      let back = false
      for (let waited = 0; waited < 10_000 && !back; waited += 100) {
        yield* store.hit(key, LIMITS)
        back = lines.some((l) => l.includes("Redis answers again"))
        if (!back) yield* Effect.sleep(100)
      }
      assert.isTrue(back, `back on Redis by itself: ${lines.join("\n")}`)
      assert.strictEqual(lines.filter((l) => l.includes("Redis answers again")).length, 1)
      // The new server starts empty: the hit that found it counted there.
      yield* Effect.sleep(50)
      const fresh = `after-${Date.now()}`
      yield* store.hit(fresh, LIMITS)
      yield* store.hit(fresh, LIMITS)
      assert.strictEqual((yield* other.peek(fresh, LIMITS)).minute.used, 2, "counting in Redis again, seen by the other instance")
    }).pipe(Effect.provide(capture), Effect.scoped), { timeout: 30_000 })
})
