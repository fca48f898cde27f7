/**
 * Webhooks as an operator runs them (docs/webhooks.md "Delivery", docs/cli.md "Serving"): `chamber
 * serve` delivers a change to a real HTTPS receiver on its own; with `--no-relay`, a separate
 * `chamber relay` process does it. The receiver's certificate is trusted through
 * NODE_EXTRA_CA_CERTS, and CHAMBER_WEBHOOK_ALLOW_PRIVATE lets the relay reach 127.0.0.1.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import { runtimes } from "@chamber/pg-adapter/testing"
import { verify } from "@chamber/webhook-relay"
import { Webhook } from "standardwebhooks"
import { BIN, chamber, Env, envLayer, get, json, post, serving } from "./harness.ts"
import { chamberWithKey as hookChamber, receiverWithTrust } from "./hookFixtures.ts"

const chamberWithKey = hookChamber("hooks:write,members:write")
const chamberKey = Effect.map(chamberWithKey, (c) => c.key)

for (const rt of runtimes()) {
  describe(`webhook delivery by the chamber command on ${rt.name}`, () => {
    layer(envLayer(rt), { timeout: 180_000 })((it) => {
      it.effect("chamber serve delivers a committed change to the subscribed HTTPS URL", () =>
        Effect.gen(function*() {
          const { receiver, env } = yield* receiverWithTrust
          const key = yield* chamberKey
          const server = yield* serving([], env)
          yield* Effect.promise(() => server.waitFor(/Webhook relay: delivering in this process/))
          const hook = yield* post(server.port, "/api/v1/hooks", key, { url: `${receiver.url}/in`, events: ["member.created"] })
          assert.strictEqual(hook.status, 201, JSON.stringify(hook.body))
          const member = yield* post(server.port, "/api/v1/members", key, { name: "Delivered Inc.", status: "active" })
          assert.strictEqual(member.status, 201)
          const [request] = yield* Effect.promise(() => receiver.waitFor(1, 20_000))
          const body = JSON.parse(request!.body.toString("utf8"))
          assert.strictEqual(request!.headers["x-cc-event"], "member.created")
          assert.deepStrictEqual(body.data, member.body.data)
        }), 120_000)

      it.effect("with serve --no-relay, a separate chamber relay process delivers, and stops gracefully", () =>
        Effect.gen(function*() {
          const { receiver, env } = yield* receiverWithTrust
          const key = yield* chamberKey
          const server = yield* serving(["--no-relay"], env)
          assert.notMatch(server.stdout(), /Webhook relay/)
          yield* post(server.port, "/api/v1/hooks", key, { url: `${receiver.url}/sep`, events: ["member.created"] })
          yield* post(server.port, "/api/v1/members", key, { name: "Relayed Elsewhere", status: "active" })
          const base = yield* Env
          const relay = spawn(process.execPath, [BIN, "relay"], { env: { ...process.env, ...base, ...env, NO_COLOR: "1" } })
          let out = ""
          relay.stdout.on("data", (d) => (out += d))
          relay.stderr.on("data", (d) => (out += d))
          const requests = yield* Effect.promise(() => receiver.waitFor(1, 20_000))
          assert.strictEqual(requests[0]!.path, "/sep")
          const code = yield* Effect.promise(() =>
            new Promise<number | null>((resolve) => {
              relay.on("close", (c) => resolve(c))
              relay.kill("SIGTERM")
            })
          )
          assert.strictEqual(code, 0, out)
          assert.match(out, /Webhook relay running/)
          assert.match(out, /Webhook relay stopped/)
        }), 120_000)

      it.effect("a failed delivery shows in hooks and deliveries; replay re-sends it with the same event id, signed afresh; reactivate", () =>
        Effect.gen(function*() {
          const { receiver, env } = yield* receiverWithTrust
          receiver.script(500, 500, 500, 500)
          const { tenant, key } = yield* chamberWithKey
          const server = yield* serving([], { ...env, CHAMBER_WEBHOOK_RETRY_DELAYS: "100ms,100ms,100ms" })
          const hook = (yield* post(server.port, "/api/v1/hooks", key, { url: `${receiver.url}/flaky`, events: ["member.created"] })).body
          yield* post(server.port, "/api/v1/members", key, { name: "Flaky Receiver Co.", status: "active" })
          const first = yield* Effect.promise(() => receiver.waitFor(4, 20_000))
          let failed: Array<any> = []
          for (let i = 0; i < 100 && failed.length === 0; i++) {
            failed = json(yield* chamber(["deliveries", "list", "--tenant", tenant, "--status", "failed", "--json"]))
            if (failed.length === 0) yield* Effect.sleep(100)
          }
          assert.lengthOf(failed, 1)
          assert.deepInclude(failed[0], { hook_id: hook.id, type: "member.created", status: "failed", attempt_count: 4 })
          assert.deepStrictEqual(failed[0].attempts.map((a: any) => a.status), [500, 500, 500, 500])
          const health = json(yield* chamber(["hooks", "list", "--tenant", tenant, "--json"]))
          assert.deepInclude(health[0], { id: hook.id, active: true, failure_count: 1, failures_before_deactivation: 19 })
          // The same health as GET /api/v1/hooks/{hook} gives the integrator.
          const own = yield* get(server.port, `/api/v1/hooks/${hook.id}`, key)
          assert.deepInclude(own.body.data, { consecutive_failures: 1, failures_before_deactivation: 19, last_failure_at: health[0].last_failure_at })
          assert.isString(health[0].last_failure_at)

          const replayed = json(yield* chamber(["deliveries", "replay", String(failed[0].id), "--json"]))
          assert.deepStrictEqual(replayed, { replayed: [failed[0].id], skipped: [] })
          const all = yield* Effect.promise(() => receiver.waitFor(5, 20_000))
          const again = all[4]!
          assert.strictEqual(again.headers["x-cc-delivery"], first[0]!.headers["x-cc-delivery"])
          assert.strictEqual(again.headers["x-cc-delivery"], failed[0].event_id)
          assert.isTrue(verify(hook.secret, again.body.toString("utf8"), String(again.headers["x-cc-signature"])))
          assert.isAtLeast(Number(again.headers["webhook-timestamp"]), Number(first[0]!.headers["webhook-timestamp"]))

          const shown = json(yield* chamber(["hooks", "show", String(hook.id), "--json"]))
          assert.strictEqual(shown.deliveries[0].attempts.length, 5)
          const reactivated = json(yield* chamber(["hooks", "reactivate", String(hook.id), "--json"]))
          assert.deepInclude(reactivated, { active: true, failure_count: 0 })
          const bad = yield* chamber(["deliveries", "replay", "--json"])
          assert.strictEqual(bad.code, 1)
          assert.match(JSON.parse(bad.stderr).error, /Name the deliveries/)
        }), 120_000)

      it.effect("hooks rotate-secret: a new secret shown once; the running server's deliveries carry both signatures until the old one ends", () =>
        Effect.gen(function*() {
          const { receiver, env } = yield* receiverWithTrust
          const { key } = yield* chamberWithKey
          const server = yield* serving([], env)
          const hook = (yield* post(server.port, "/api/v1/hooks", key, { url: `${receiver.url}/rotating`, events: ["member.created"] })).body
          const rotated = json(yield* chamber(["hooks", "rotate-secret", String(hook.id), "--previous-expires-in", "600", "--json"]))
          assert.deepStrictEqual(Object.keys(rotated), ["id", "url", "secret", "previous_expires_at"])
          assert.match(rotated.secret, /^whsec_[A-Za-z0-9+/]{43}=$/)
          assert.approximately(Date.parse(rotated.previous_expires_at), Date.now() + 600_000, 30_000)
          yield* post(server.port, "/api/v1/members", key, { name: "Rotated Inc.", status: "active" })
          const [request] = yield* Effect.promise(() => receiver.waitFor(1, 20_000))
          const headers = { "webhook-id": String(request!.headers["webhook-id"]), "webhook-timestamp": String(request!.headers["webhook-timestamp"]) }
          const [newer, older] = String(request!.headers["webhook-signature"]).split(" ")
          const body = request!.body.toString("utf8")
          assert.doesNotThrow(() => new Webhook(rotated.secret).verify(body, { ...headers, "webhook-signature": newer! }))
          assert.doesNotThrow(() => new Webhook(hook.secret).verify(body, { ...headers, "webhook-signature": older! }))
          assert.isTrue(verify(hook.secret, body, String(request!.headers["x-cc-signature-previous"])))

          const text = yield* chamber(["hooks", "rotate-secret", String(hook.id), "--previous-expires-in", "0"])
          assert.strictEqual(text.code, 0)
          assert.match(text.stdout, /^New secret for https:\/\/127\.0\.0\.1:\d+\/rotating \(shown once\):\n {2}whsec_\S{44}\nThe previous secret signs beside it until \d{4}-/)
          const bad = yield* chamber(["hooks", "rotate-secret", String(hook.id), "--previous-expires-in", "604801", "--json"])
          assert.deepStrictEqual([bad.code, JSON.parse(bad.stderr).error], [1, "--previous-expires-in must be a whole number of seconds from 0 to 604800, not \"604801\"."])
          const none = yield* chamber(["hooks", "rotate-secret", "99999", "--json"])
          assert.deepStrictEqual([none.code, JSON.parse(none.stderr).error], [1, "No webhook subscription 99999."])
        }), 120_000)
    })
  })
}
