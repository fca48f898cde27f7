/**
 * A relay's LISTEN survives the database connection dropping (docs/webhooks.md "Delivery"), on
 * PostgreSQL: the relay reaches the database through a TCP proxy of the test's own, which cuts
 * every connection and comes back. The relay looks for due deliveries only every 30 s here, so a
 * delivery that leaves at once was woken by a notification. It logs the loss once and the return
 * once, and deliveries leave at once again.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import { AllowPrivateDestinations, Hooks, Members, Tenants } from "@chamber/core"
import { DeliveryStoreSql, StorageLive } from "@chamber/pg-adapter"
import { DatabaseConfigRef, runtimes } from "@chamber/pg-adapter/testing"
import { tcpProxy, throughProxy } from "@chamber/pg-adapter/testing/tcp-proxy"
import { RelayLive } from "../src/index.ts"
import { startReceiver } from "./receiver.ts"

/** The suite's own storage, straight to the database, and the database's config; subscriptions may name the loopback receiver. */
const suite = (rt: ReturnType<typeof runtimes>[number]) =>
  Layer.unwrap(Effect.map(Effect.service(DatabaseConfigRef), (config) => StorageLive(config))).pipe(
    Layer.provideMerge(rt.database),
    Layer.merge(Layer.succeed(AllowPrivateDestinations)(true))
  )

/** Until a line matching `pattern` has been logged. */
const until = (lines: ReadonlyArray<string>, pattern: RegExp, timeoutMs = 15_000) =>
  Effect.gen(function*() {
    const started = Date.now()
    while (!lines.some((l) => pattern.test(l))) {
      if (Date.now() - started > timeoutMs) return yield* Effect.die(new Error(`no ${pattern} logged within ${timeoutMs} ms:\n${lines.join("\n")}`))
      yield* Effect.sleep(50)
    }
  })

const postgres = runtimes().find((r) => r.name === "postgres")

describe("the relay's LISTEN on postgres", () => {
  // The embedded database has no LISTEN: its relay polls. The harness says loudly when DATABASE_URL is unset.
  if (postgres === undefined) {
    it.skip("needs PostgreSQL (DATABASE_URL)")
    return
  }
  layer(suite(postgres), { timeout: 120_000, excludeTestServices: true })((it) => {
    it.effect("comes back after the connection is cut and restored: the loss and the return logged once each, deliveries leaving at once again", () => {
      const lines: Array<string> = []
      const capture = Logger.layer([Logger.make(({ logLevel, message }) => void lines.push(`${logLevel} ${[message].flat().join(" ")}`))])
      return Effect.gen(function*() {
        const config = yield* DatabaseConfigRef
        if (config._tag !== "Postgres") return
        const proxy = yield* Effect.acquireRelease(Effect.promise(() => tcpProxy(new URL(config.url))), (p) => Effect.promise(() => p.close()))
        const receiver = yield* Effect.acquireRelease(Effect.promise(() => startReceiver()), (r) => Effect.promise(() => r.close()))
        const settings = { retryDelaysMs: [100, 100, 100], timeoutMs: 2_000, allowPrivate: true, retentionMs: 86_400_000 }
        yield* Layer.build(
          RelayLive({ settings, listen: true, ca: receiver.ca, pollMs: 30_000 }).pipe(
            Layer.provide(DeliveryStoreSql),
            Layer.provide(StorageLive({ _tag: "Postgres", url: throughProxy(config.url, proxy), maxConnections: 4 }))
          )
        )
        const tenant = yield* (yield* Tenants).create({ name: "Listening" })
        yield* (yield* Hooks).create(tenant.id, { url: `${receiver.url}/listen`, events: ["member.created"] })
        const members = yield* Members
        const delivered = (count: number) =>
          Effect.gen(function*() {
            const committed = Date.now()
            yield* members.create(tenant.id, { name: `Member ${count}`, status: "active" }).pipe(Effect.orDie)
            const requests = yield* Effect.promise(() => receiver.waitFor(count, 5_000))
            return requests[count - 1]!.receivedAt.getTime() - committed
          })

        yield* delivered(1)
        yield* Effect.promise(() => proxy.close())
        yield* until(lines, /^Warn relay: not listening for notifications/)
        yield* Effect.promise(() => proxy.open())
        yield* until(lines, /^Info relay: listening for notifications again/)
        const lag = yield* delivered(2)
        console.log(`listen test: after LISTEN came back, a delivery arrived ${lag} ms after its commit`)
        assert.isBelow(lag, 5_000, "woken by a notification, not by the 30 s poll")
        assert.lengthOf(lines.filter((l) => /not listening/.test(l)), 1, lines.join("\n"))
        assert.lengthOf(lines.filter((l) => /listening for notifications again/.test(l)), 1, lines.join("\n"))
      }).pipe(Effect.provide(capture))
    }, 60_000)
  })
})
