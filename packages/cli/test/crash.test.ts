/**
 * Nothing is lost when relays die (docs/webhooks.md "Delivery"), on PostgreSQL, where several
 * relays share one database: `chamber relay` processes killed with SIGKILL in the middle of a
 * 1,000-event burst, three times, then one left running: every event reaches the receiver at least
 * once; the duplicates a dead relay's unrecorded sends cause are counted and reported. With the
 * default settings, the deliveries a killed relay held go out again from another relay within
 * 15 s. Two relays running side by side deliver every event exactly once.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { type ChildProcess, spawn } from "node:child_process"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import pg from "pg"
import { postgresOnly } from "@chamber/pg-adapter/testing"
import { type Receiver, startReceiver } from "@chamber/webhook-relay/test/receiver"
import { BIN, chamber, Env, envLayer, json, serving } from "./harness.ts"
import { suiteDir } from "./tempDirs.ts"

const dir = suiteDir("crash")

const setup = Effect.gen(function*() {
  const receiver = yield* Effect.acquireRelease(Effect.promise(() => startReceiver()), (r) => Effect.promise(() => r.close()))
  const ca = join(dir, `receiver-${receiver.port}.pem`)
  writeFileSync(ca, receiver.ca)
  /** What a relay needs to reach the test's receiver; every delivery setting at its default. */
  const trust = { NODE_EXTRA_CA_CERTS: ca, CHAMBER_WEBHOOK_ALLOW_PRIVATE: "true" }
  const relayEnv = {
    ...trust,
    CHAMBER_WEBHOOK_TIMEOUT: "5s",
    CHAMBER_WEBHOOK_LEASE: "8s",
    CHAMBER_WEBHOOK_RETRY_DELAYS: "100ms,100ms,100ms"
  }
  const tenant = json(yield* chamber(["tenant", "create", "--name", `Crash ${receiver.port}`, "--json"]))
  json(yield* chamber(["user", "add", "--tenant", tenant.id, "--email", "ops@crash.example", "--role", "chamber_admin", "--json"]))
  const key = json(yield* chamber(["key", "mint", "--tenant", tenant.id, "--as", "ops@crash.example", "--name", "k", "--scopes", "hooks:write", "--json"])).key
  // The receiver is on loopback: the server that takes the subscription allows it, as the relays do.
  const server = yield* serving(["--no-relay"], trust)
  const res = yield* Effect.promise(() =>
    fetch(`http://127.0.0.1:${server.port}/api/v1/hooks`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ url: `${receiver.url}/burst`, events: ["member.created"] })
    })
  )
  assert.strictEqual(res.status, 201)
  return { receiver, trust, relayEnv, tenant: tenant.id as string }
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

/** A statement against the suite's database, on a connection of its own. */
const query = <Row,>(text: string, values: ReadonlyArray<unknown> = []) =>
  Effect.flatMap(Effect.service(Env), (env) =>
    Effect.promise(async () => {
      const client = new pg.Client({ connectionString: env.DATABASE_URL })
      await client.connect()
      try {
        return (await client.query(text, [...values])).rows as Array<Row>
      } finally {
        await client.end()
      }
    }))

/** The pending deliveries each relay process holds a live lease on, by its pid (relay ids are `host:pid:random`). */
const leasesByPid = Effect.map(
  query<{ readonly leased_by: string; readonly ids: Array<string> }>(
    `SELECT leased_by, array_agg(id::text) AS ids FROM webhook_deliveries
     WHERE status = 'pending' AND lease_expires_at > now() GROUP BY leased_by`
  ),
  (rows) => new Map(rows.map((r) => [Number(/:(\d+):[0-9a-f]+$/.exec(r.leased_by)?.[1]), r.ids.map(Number)]))
)

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

      it.effect("SIGKILL of the relay holding a subscription's places mid-burst, another relay up, default settings: what it held goes out again within 15 s; nothing is lost", () =>
        Effect.gen(function*() {
          const { receiver, trust, tenant } = yield* setup
          // Each answer takes 250 ms, so the subscription's 4 places stay taken through the burst.
          receiver.setDefault({ status: 200, delayMs: 250 })
          const first = yield* startRelay(trust)
          yield* burst(tenant, 200, "held")
          yield* untilDistinct(receiver, 20)
          const second = yield* startRelay(trust)
          yield* untilDistinct(receiver, 40)
          const leases = yield* leasesByPid
          const [victim, survivor] = (leases.get(first.pid!)?.length ?? 0) >= (leases.get(second.pid!)?.length ?? 0) ? [first, second] : [second, first]
          const held = leases.get(victim.pid!) ?? []
          assert.isAbove(held.length, 0, "the relay killed holds some of the subscription's places")
          yield* stopped(victim, "SIGKILL")
          const killedAt = Date.now()
          let done = 0
          while (done < held.length && Date.now() - killedAt < 15_000) {
            yield* Effect.sleep(100)
            done = (yield* query<{ readonly n: number }>(
              `SELECT count(*)::int AS n FROM webhook_deliveries WHERE id = ANY($1::bigint[]) AND status = 'succeeded'`,
              [held]
            ))[0]!.n
          }
          const tookMs = Date.now() - killedAt
          assert.strictEqual(done, held.length, `${done} of the ${held.length} deliveries the killed relay held were delivered within ${tookMs} ms`)
          yield* untilDistinct(receiver, 200)
          yield* stopped(survivor, "SIGTERM")
          const duplicates = [...received(receiver).values()].reduce((n, c) => n + c - 1, 0)
          console.log(`crash test: a SIGKILLed relay's ${held.length} deliveries went out again ${tookMs} ms after the kill; ${duplicates} duplicates`)
          assert.strictEqual(received(receiver).size, 200)
          // Sent twice at most: what the dead relay held, at most the subscription's 4 places.
          assert.isAtMost(duplicates, 4)
        }), 120_000)

      it.effect("two relays side by side deliver every event exactly once", () =>
        Effect.gen(function*() {
          const { receiver, relayEnv, tenant } = yield* setup
          const relays = [yield* startRelay(relayEnv), yield* startRelay(relayEnv)]
          yield* burst(tenant, 500, "pair")
          yield* untilDistinct(receiver, 500)
          // Stopped before counting: once they have exited, no request of theirs can still arrive.
          yield* Effect.forEach(relays, (r) => stopped(r, "SIGTERM"))
          const byEvent = received(receiver)
          assert.strictEqual(byEvent.size, 500)
          assert.deepStrictEqual([...byEvent.values()].filter((c) => c > 1), [])
        }), 240_000)
    })
  })
}
