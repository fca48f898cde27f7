/**
 * Nothing is lost when relays die (docs/webhooks.md "Delivery"), on PostgreSQL, where several
 * relays share one database: `chamber relay` processes killed with SIGKILL in the middle of a
 * 1,000-event burst, three times, then one left running: every event reaches the receiver at least
 * once; the duplicates a dead relay's unrecorded sends cause are counted and reported. Two relays
 * running side by side deliver every event exactly once.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { type ChildProcess, spawn } from "node:child_process"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { postgresOnly } from "@chamber/pg-adapter/testing"
import { type Receiver, startReceiver } from "@chamber/webhook-relay/test/receiver"
import { BIN, chamber, Env, envLayer, json, serving } from "./harness.ts"
import { suiteDir } from "./tempDirs.ts"

const dir = suiteDir("crash")

const setup = Effect.gen(function*() {
  const receiver = yield* Effect.acquireRelease(Effect.promise(() => startReceiver()), (r) => Effect.promise(() => r.close()))
  const ca = join(dir, `receiver-${receiver.port}.pem`)
  writeFileSync(ca, receiver.ca)
  const relayEnv = {
    NODE_EXTRA_CA_CERTS: ca,
    CHAMBER_WEBHOOK_ALLOW_PRIVATE: "true",
    CHAMBER_WEBHOOK_TIMEOUT: "5s",
    CHAMBER_WEBHOOK_LEASE: "8s",
    CHAMBER_WEBHOOK_RETRY_DELAYS: "100ms,100ms,100ms"
  }
  const tenant = json(yield* chamber(["tenant", "create", "--name", `Crash ${receiver.port}`, "--json"]))
  json(yield* chamber(["user", "add", "--tenant", tenant.id, "--email", "ops@crash.example", "--role", "chamber_admin", "--json"]))
  const key = json(yield* chamber(["key", "mint", "--tenant", tenant.id, "--as", "ops@crash.example", "--name", "k", "--scopes", "hooks:write", "--json"])).key
  const server = yield* serving(["--no-relay"])
  const res = yield* Effect.promise(() =>
    fetch(`http://127.0.0.1:${server.port}/api/v1/hooks`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ url: `${receiver.url}/burst`, events: ["member.created"] })
    })
  )
  assert.strictEqual(res.status, 201)
  return { receiver, relayEnv, tenant: tenant.id as string }
})

/** `count` new members in one transaction: a burst of `count` events at its commit. */
const burst = (tenant: string, count: number, tag: string) =>
  Effect.gen(function*() {
    const file = join(dir, `${tag}.json`)
    writeFileSync(file, JSON.stringify({ members: Array.from({ length: count }, (_, i) => ({ name: `${tag} member ${i}`, status: "active" })) }))
    json(yield* chamber(["import", "--tenant", tenant, file, "--json"]))
  })

const startRelay = (relayEnv: Record<string, string>) =>
  Effect.map(Effect.service(Env), (env): ChildProcess =>
    spawn(process.execPath, [BIN, "relay"], { env: { ...process.env, ...env, ...relayEnv, NO_COLOR: "1" }, stdio: "ignore" }))

const stopped = (child: ChildProcess, signal: NodeJS.Signals) =>
  Effect.promise(() =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve()
      child.on("close", () => resolve())
      child.kill(signal)
    })
  )

/** Requests received, by event id. */
const received = (receiver: Receiver) => {
  const byEvent = new Map<string, number>()
  for (const r of receiver.requests) {
    const id = String(r.headers["x-cc-delivery"])
    byEvent.set(id, (byEvent.get(id) ?? 0) + 1)
  }
  return byEvent
}

const untilDistinct = (receiver: Receiver, count: number, timeoutMs = 90_000) =>
  Effect.promise(async () => {
    const started = Date.now()
    while (received(receiver).size < count) {
      if (Date.now() - started > timeoutMs) throw new Error(`only ${received(receiver).size} of ${count} events arrived`)
      await new Promise((r) => setTimeout(r, 20))
    }
  })

for (const rt of postgresOnly("relays that die lose nothing on postgres")) {
  describe(`relays that die lose nothing on ${rt.name}`, () => {
    layer(envLayer(rt), { timeout: 240_000, excludeTestServices: true })((it) => {
      it.effect("SIGKILL three times during a 1,000-event burst, then a relay left running: every event arrives at least once", () =>
        Effect.gen(function*() {
          const { receiver, relayEnv, tenant } = yield* setup
          yield* burst(tenant, 1_000, "burst")
          for (const killAt of [150, 400, 650]) {
            const relay = yield* startRelay(relayEnv)
            yield* untilDistinct(receiver, killAt)
            yield* stopped(relay, "SIGKILL")
          }
          const last = yield* startRelay(relayEnv)
          yield* untilDistinct(receiver, 1_000)
          yield* stopped(last, "SIGTERM")
          const byEvent = received(receiver)
          const duplicates = [...byEvent.values()].reduce((n, c) => n + c - 1, 0)
          console.log(`crash test: 1,000 events, ${receiver.requests.length} requests, ${duplicates} duplicates after 3 SIGKILLs`)
          assert.strictEqual(byEvent.size, 1_000)
        }), 240_000)

      it.effect("two relays side by side deliver every event exactly once", () =>
        Effect.gen(function*() {
          const { receiver, relayEnv, tenant } = yield* setup
          const relays = [yield* startRelay(relayEnv), yield* startRelay(relayEnv)]
          yield* burst(tenant, 500, "pair")
          yield* untilDistinct(receiver, 500)
          yield* Effect.sleep(500)
          yield* Effect.forEach(relays, (r) => stopped(r, "SIGTERM"))
          const byEvent = received(receiver)
          assert.strictEqual(byEvent.size, 500)
          assert.deepStrictEqual([...byEvent.values()].filter((c) => c > 1), [])
        }), 240_000)
    })
  })
}
