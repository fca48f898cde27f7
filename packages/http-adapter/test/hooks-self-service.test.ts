/**
 * Webhooks integrators run themselves (docs/webhooks.md; ruling 31), over HTTP on every storage
 * runtime, with a relay delivering to a real HTTPS receiver: one subscription's health moving
 * with failures and a success, its deliveries and their attempts, replay, recovery of a window,
 * ping, and secret rotation verified with the Standard Webhooks library; a literal private
 * address refused at creation (link-local and metadata ones even with private destinations
 * allowed), and a ping to a refused destination answered like one to a name that does not resolve. Access and
 * ids are checked by contract.test.ts and the fuzzer.
 */
import { createHmac } from "node:crypto"
import { request as httpRequest } from "node:http"
import { connect } from "node:net"
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import { DeliveryStoreSql } from "@chamber/pg-adapter"
import { runtimes } from "@chamber/pg-adapter/testing"
import { HookPingsLive, NOT_PUBLIC, RelayLive } from "@chamber/webhook-relay"
import { type ReceivedRequest, type Receiver, startReceiver, testCertificate } from "@chamber/webhook-relay/test/receiver"
import { Webhook } from "standardwebhooks"
import { NodeServerTest } from "../src/index.ts"
import { call, chamberWithKey, rateLimitsAt, type Reply, serverListeningOn, serverOn, serverUrl, SUITE_PER_MINUTE } from "./fixture.ts"

const { cert } = await testCertificate()

const ok = (reply: Reply, status: number) => {
  assert.strictEqual(reply.status, status, JSON.stringify(reply.body))
  return reply.body
}

/** A receiver and a relay delivering to it (retries 50 ms apart, one delivery of a subscription at a time), gone with the test's scope. */
const relayed = Effect.gen(function*() {
  const receiver = yield* Effect.acquireRelease(Effect.promise(() => startReceiver()), (r) => Effect.promise(() => r.close()))
  const settings = { retryDelaysMs: [50, 50, 50], timeoutMs: 2_000, allowPrivate: true, retentionMs: 86_400_000 }
  yield* Layer.build(RelayLive({ settings, listen: false, ca: receiver.ca, pollMs: 50, perSubscription: 1 }).pipe(Layer.provide(DeliveryStoreSql)))
  return receiver
})

let n = 0
/** A chamber with a members:write and hooks:write key, subscribed to member.created at the receiver. */
const subscribed = (receiver: Receiver) =>
  Effect.gen(function*() {
    const { tenant, key } = yield* chamberWithKey("hooks:write,members:write")
    const hook = ok(yield* call("POST", "/api/v1/hooks", { key, body: { url: `${receiver.url}/hooks/${++n}`, events: ["member.created"] } }), 201)
    return { tenant, key, hook: hook as { readonly id: number; readonly url: string; readonly secret: string } }
  })

const member = (key: string, name: string) => Effect.map(call("POST", "/api/v1/members", { key, body: { name, status: "active" } }), (r) => ok(r, 201))

/** Polls `read` until `done` holds of it (15 s at most); its last value either way. */
const until = <A, R>(read: Effect.Effect<A, never, R>, done: (a: A) => boolean) =>
  Effect.gen(function*() {
    let value = yield* read
    for (let i = 0; i < 300 && !done(value); i++) {
      yield* Effect.sleep(50)
      value = yield* read
    }
    return value
  })

const health = (key: string, id: number) => Effect.map(call("GET", `/api/v1/hooks/${id}`, { key }), (r) => ok(r, 200).data)
const deliveries = (key: string, id: number, query = "") => Effect.map(call("GET", `/api/v1/hooks/${id}/deliveries${query}`, { key }), (r) => ok(r, 200))

/** The Standard Webhooks headers of a request as the library takes them. */
const standard = (r: ReceivedRequest) => ({
  "webhook-id": String(r.headers["webhook-id"]),
  "webhook-timestamp": String(r.headers["webhook-timestamp"]),
  "webhook-signature": String(r.headers["webhook-signature"])
})
/** Whether the Standard Webhooks library verifies `r` with `secret` alone. */
const verifies = (secret: string, r: ReceivedRequest) => {
  try {
    new Webhook(secret).verify(r.body.toString("utf8"), standard(r))
    return true
  } catch {
    return false
  }
}
const hex = (secret: string, r: ReceivedRequest) => createHmac("sha256", secret).update(r.body).digest("hex")

interface Raw {
  readonly status: number
  readonly body: any
}

/** The status and JSON body of an HTTP/1.1 answer as read off the socket (`Content-Length` or chunked). */
const parseRaw = (raw: Buffer): Raw => {
  const split = raw.indexOf("\r\n\r\n")
  const head = raw.subarray(0, split).toString("latin1")
  let body = raw.subarray(split + 4)
  if (/^transfer-encoding:\s*chunked/im.test(head)) {
    const parts: Array<Buffer> = []
    for (let at = 0;;) {
      const eol = body.indexOf("\r\n", at)
      const size = parseInt(body.subarray(at, eol).toString("latin1"), 16)
      if (size === 0) break
      parts.push(body.subarray(eol + 2, eol + 2 + size))
      at = eol + 2 + size + 2
    }
    body = Buffer.concat(parts)
  }
  return { status: Number(head.split(" ")[1]), body: JSON.parse(body.toString("utf8")) }
}

/**
 * A POST with no body and no Content-Length nor Transfer-Encoding, as `curl -X POST` sends it:
 * written by hand on a socket, since node:http's client would add `Content-Length: 0`.
 */
const bareSocketPost = (url: string, path: string, key: string) =>
  Effect.promise(() =>
    new Promise<Raw>((resolve, reject) => {
      const { hostname, port } = new URL(url)
      const socket = connect(Number(port), hostname)
      const chunks: Array<Buffer> = []
      socket.on("data", (chunk) => chunks.push(chunk))
      socket.on("error", reject)
      socket.on("end", () => resolve(parseRaw(Buffer.concat(chunks))))
      socket.write(`POST ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAuthorization: Bearer ${key}\r\nAccept: */*\r\nConnection: close\r\n\r\n`)
    })
  )

/** A POST through node:http with exactly the given headers and no body written. */
const nodeHttpPost = (url: string, path: string, headers: Record<string, string>) =>
  Effect.promise(() =>
    new Promise<Raw>((resolve, reject) => {
      const req = httpRequest(new URL(path, url), { method: "POST", headers }, (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (chunk: Buffer) => chunks.push(chunk))
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) }))
      })
      req.on("error", reject)
      req.end()
    })
  )

for (const rt of runtimes()) {
  describe(`webhook self-service with a relay on ${rt.name}`, () => {
    const pings = HookPingsLive({ timeoutMs: 2_000, allowPrivate: true }, cert)
    layer(serverListeningOn(NodeServerTest, rt, rateLimitsAt(SUITE_PER_MINUTE), pings), { timeout: 120_000, excludeTestServices: true })((it) => {
      it.effect("with private destinations allowed, link-local and metadata addresses stay refused: a 422 when literal, a refused ping when stored", () =>
        Effect.gen(function*() {
          const { key } = yield* chamberWithKey("hooks:write")
          const events = ["member.created"]
          for (const host of ["169.254.169.254", "169.254.170.2", "[fe80::1]", "[::ffff:169.254.169.254]", "[fd00:ec2::254]", "100.100.100.200", "0xa9fea9fe"]) {
            const reply = yield* call("POST", "/api/v1/hooks", { key, body: { url: `https://${host}/latest/meta-data/`, events } })
            assert.strictEqual(reply.status, 422, host)
            assert.deepStrictEqual(Object.keys(reply.body.errors), ["url"], host)
          }
          for (const host of ["127.0.0.1", "10.1.2.3", "[fd12::1]"]) {
            ok(yield* call("POST", "/api/v1/hooks", { key, body: { url: `https://${host}/hook`, events } }), 201)
          }
          // A subscription stored before the rule (or by hand) that leads to the metadata service: the ping never connects.
          const hook = ok(yield* call("POST", "/api/v1/hooks", { key, body: { url: "https://10.9.9.9/hook", events } }), 201)
          const sql = yield* SqlClient.SqlClient
          yield* sql`UPDATE webhook_subscriptions SET url = 'https://169.254.169.254/latest/meta-data/' WHERE id = ${hook.id}`.pipe(Effect.orDie)
          const pinged = ok(yield* call("POST", `/api/v1/hooks/${hook.id}/ping`, { key }), 200).data
          assert.deepInclude(pinged, { ok: false, status_code: null, error: NOT_PUBLIC })
        }))

      it.effect("GET one: the subscription as listed plus its health, moving with failures, deactivation and a success; another chamber's is a 404", () =>
        Effect.scoped(Effect.gen(function*() {
          const receiver = yield* relayed
          const { key, hook } = yield* subscribed(receiver)
          const { secret: _, ...listed } = hook
          const fresh = yield* health(key, hook.id)
          assert.deepStrictEqual(fresh, { ...listed, consecutive_failures: 0, last_success_at: null, last_failure_at: null, failures_before_deactivation: 20 })
          assert.deepStrictEqual(ok(yield* call("GET", "/api/v1/hooks", { key }), 200).data, [listed])

          receiver.setDefault(500)
          yield* member(key, "Fails")
          const failing = yield* until(health(key, hook.id), (h) => h.consecutive_failures === 1)
          assert.deepInclude(failing, { active: true, consecutive_failures: 1, last_success_at: null, failures_before_deactivation: 19 })
          assert.isNotNull(failing.last_failure_at)

          // The 20th failed delivery in a row deactivates it.
          const sql = yield* SqlClient.SqlClient
          yield* sql`UPDATE webhook_subscriptions SET failure_count = 19 WHERE id = ${hook.id}`.pipe(Effect.orDie)
          yield* member(key, "Fails again")
          const off = yield* until(health(key, hook.id), (h) => h.consecutive_failures === 20)
          assert.deepInclude(off, { active: false, consecutive_failures: 20, failures_before_deactivation: 0 })

          // Posted again: active, count reset; a success keeps it at 0 and is dated.
          ok(yield* call("POST", "/api/v1/hooks", { key, body: { url: hook.url, events: ["member.created"] } }), 201)
          receiver.setDefault(200)
          yield* member(key, "Succeeds")
          const healthy = yield* until(health(key, hook.id), (h) => h.last_success_at !== null)
          assert.deepInclude(healthy, { active: true, consecutive_failures: 0, failures_before_deactivation: 20 })

          const other = yield* chamberWithKey("hooks:write")
          assert.deepStrictEqual(ok(yield* call("GET", `/api/v1/hooks/${hook.id}`, { key: other.key }), 404), { message: "Not found." })
        })))

      it.effect("deliveries: newest first with every attempt, filtered by status, paged; another chamber's subscription is a 404", () =>
        Effect.scoped(Effect.gen(function*() {
          const receiver = yield* relayed
          const { key, hook } = yield* subscribed(receiver)
          receiver.script({ status: 500, body: "down for a moment" }, { status: 503, body: "x".repeat(3000) })
          yield* member(key, "First")
          const first = yield* until(deliveries(key, hook.id), (l) => l.data[0]?.attributes.status === "succeeded")
          receiver.setDefault(500)
          yield* member(key, "Second")
          const list = yield* until(deliveries(key, hook.id), (l) => l.data[0]?.attributes.status === "failed" && l.data.length === 2)
          assert.deepStrictEqual(list.meta, { current_page: 1, per_page: 100, total: 2, last_page: 1 })
          const [failed, succeeded] = list.data
          assert.deepStrictEqual(succeeded, first.data[0])
          assert.isAbove(failed.id, succeeded.id)
          assert.deepStrictEqual(Object.keys(failed), ["id", "attributes", "created_at", "updated_at"])
          assert.deepStrictEqual(Object.keys(failed.attributes), ["event_id", "type", "status", "attempt_count", "next_attempt_at", "attempts"])
          assert.deepInclude(failed.attributes, { type: "member.created", status: "failed", attempt_count: 4, next_attempt_at: null })
          assert.match(failed.attributes.event_id, /^evt_/)
          const sent = receiver.requests.map((r) => String(r.headers["webhook-id"]))
          assert.deepStrictEqual(sent, [...Array(3).fill(succeeded.attributes.event_id), ...Array(4).fill(failed.attributes.event_id)])
          const attempts = succeeded.attributes.attempts
          assert.deepStrictEqual(attempts.map((a: any) => [a.status_code, a.error]), [
            [500, "The destination answered 500."],
            [503, "The destination answered 503."],
            [200, null]
          ])
          assert.deepStrictEqual(Object.keys(attempts[0]), ["attempted_at", "status_code", "latency_ms", "error", "response_excerpt"])
          assert.strictEqual(attempts[0].response_excerpt, "down for a moment")
          assert.strictEqual(attempts[1].response_excerpt, "x".repeat(1024))
          assert.isAtLeast(attempts[0].latency_ms, 0)
          assert.deepStrictEqual((yield* deliveries(key, hook.id, "?status=failed")).data, [failed])
          assert.deepStrictEqual((yield* deliveries(key, hook.id, "?status=succeeded")).data.map((d: any) => d.id), [succeeded.id])
          assert.deepStrictEqual(yield* deliveries(key, hook.id, "?status=pending"), { data: [], meta: { current_page: 1, per_page: 100, total: 0, last_page: 1 } })
          assert.deepStrictEqual((yield* deliveries(key, hook.id, "?page=2")).data, [])
          assert.deepStrictEqual(Object.keys(ok(yield* call("GET", `/api/v1/hooks/${hook.id}/deliveries?status=lost`, { key }), 422).errors), ["status"])

          const other = yield* chamberWithKey("hooks:write")
          ok(yield* call("GET", `/api/v1/hooks/${hook.id}/deliveries`, { key: other.key }), 404)
          ok(yield* call("POST", `/api/v1/hooks/${hook.id}/deliveries/${failed.id}/replay`, { key: other.key }), 404)
        })))

      it.effect("replay: 202 with the delivery queued again; the same event id, signed afresh, a fresh set of retries", () =>
        Effect.scoped(Effect.gen(function*() {
          const receiver = yield* relayed
          const { key, hook } = yield* subscribed(receiver)
          receiver.setDefault(500)
          yield* member(key, "Replayed")
          const [failed] = (yield* until(deliveries(key, hook.id, "?status=failed"), (l) => l.data.length === 1)).data
          // The next second on the clock: the replay's webhook-timestamp differs from the failed attempt's.
          yield* Effect.sleep(1_000 - (Date.now() % 1_000) + 1)
          receiver.setDefault(200)
          const replayed = ok(yield* call("POST", `/api/v1/hooks/${hook.id}/deliveries/${failed.id}/replay`, { key }), 202).data
          assert.strictEqual(replayed.id, failed.id)
          assert.deepInclude(replayed.attributes, { event_id: failed.attributes.event_id, status: "pending", attempt_count: 0 })
          assert.lengthOf(replayed.attributes.attempts, 4)
          const [done] = (yield* until(deliveries(key, hook.id), (l) => l.data[0]?.attributes.status === "succeeded")).data
          assert.deepInclude(done.attributes, { status: "succeeded", attempt_count: 1 })
          assert.lengthOf(done.attributes.attempts, 5)
          const [before, after] = [receiver.requests[3]!, receiver.requests[4]!]
          assert.strictEqual(after.headers["webhook-id"], failed.attributes.event_id)
          assert.deepStrictEqual(after.body, before.body)
          assert.notStrictEqual(after.headers["webhook-timestamp"], before.headers["webhook-timestamp"])
          assert.isTrue(verifies(hook.secret, after))
          assert.strictEqual(after.headers["x-cc-signature"], hex(hook.secret, after))
          // A delivery of another subscription, or none, is a 404.
          const { hook: another } = yield* subscribed(receiver)
          ok(yield* call("POST", `/api/v1/hooks/${another.id}/deliveries/${failed.id}/replay`, { key }), 404)
          ok(yield* call("POST", `/api/v1/hooks/${hook.id}/deliveries/${failed.id + 1000}/replay`, { key }), 404)
        })))

      it.effect("recover: every failed delivery created in the window queued again, oldest first; none outside it, no succeeded one", () =>
        Effect.scoped(Effect.gen(function*() {
          const receiver = yield* relayed
          const { key, hook } = yield* subscribed(receiver)
          receiver.setDefault(500)
          for (const name of ["Old", "Middle", "New"]) yield* member(key, name)
          yield* until(deliveries(key, hook.id, "?status=failed"), (l) => l.data.length === 3)
          receiver.setDefault(200)
          yield* member(key, "Fine")
          yield* until(deliveries(key, hook.id, "?status=succeeded"), (l) => l.data.length === 1)
          // Spread their creation over three hours: Old 3 h ago, Middle 2 h, New 1 h, Fine 30 min.
          const sql = yield* SqlClient.SqlClient
          const ids = (yield* deliveries(key, hook.id)).data.map((d: any) => d.id).reverse()
          for (const [i, ago] of [[0, 180], [1, 120], [2, 60], [3, 30]] as const) {
            yield* sql`UPDATE webhook_deliveries SET created_at = now() - ${ago} * interval '1 minute' WHERE id = ${ids[i]}`.pipe(Effect.orDie)
          }
          const events = new Map<number, string>((yield* deliveries(key, hook.id)).data.map((d: any) => [d.id, d.attributes.event_id]))
          receiver.reset()
          const since = new Date(Date.now() - 150 * 60_000).toISOString()
          const body = ok(yield* call("POST", `/api/v1/hooks/${hook.id}/recover`, { key, body: { since } }), 202)
          assert.deepStrictEqual(body, { data: { queued: 2 } })
          const got = yield* Effect.promise(() => receiver.waitFor(2))
          assert.deepStrictEqual(got.map((r) => r.headers["webhook-id"]), [events.get(ids[1]), events.get(ids[2])])
          yield* until(deliveries(key, hook.id, "?status=failed"), (l) => l.data.length === 1)
          assert.deepStrictEqual((yield* deliveries(key, hook.id, "?status=failed")).data.map((d: any) => d.id), [ids[0]])
          // `until` closes the window; an empty window queues nothing.
          const early = { since: new Date(Date.now() - 200 * 60_000).toISOString(), until: new Date(Date.now() - 170 * 60_000).toISOString() }
          assert.deepStrictEqual(ok(yield* call("POST", `/api/v1/hooks/${hook.id}/recover`, { key, body: early }), 202), { data: { queued: 1 } })
          assert.deepStrictEqual(ok(yield* call("POST", `/api/v1/hooks/${hook.id}/recover`, { key, body: early }), 202), { data: { queued: 0 } })
          assert.deepStrictEqual(Object.keys(ok(yield* call("POST", `/api/v1/hooks/${hook.id}/recover`, { key, body: {} }), 422).errors), ["since"])
          assert.deepStrictEqual(Object.keys(ok(yield* call("POST", `/api/v1/hooks/${hook.id}/recover`, { key, body: { since: "yesterday" } }), 422).errors), ["since"])
        })))

      it.effect("ping: one signed ping answered at once, not stored, counting no failure, also on an inactive subscription", () =>
        Effect.scoped(Effect.gen(function*() {
          const receiver = yield* relayed
          const { key, hook } = yield* subscribed(receiver)
          const pinged = ok(yield* call("POST", `/api/v1/hooks/${hook.id}/ping`, { key }), 200).data
          assert.deepStrictEqual(Object.keys(pinged), ["ok", "status_code", "latency_ms", "error"])
          assert.deepInclude(pinged, { ok: true, status_code: 200, error: null })
          const [request] = receiver.requests
          const sent = JSON.parse(request!.body.toString("utf8"))
          assert.deepStrictEqual(Object.keys(sent), ["id", "type", "created_at", "data"])
          assert.deepInclude(sent, { type: "ping", data: { hook_id: hook.id } })
          assert.match(sent.id, /^evt_/)
          assert.strictEqual(request!.headers["x-cc-event"], "ping")
          assert.isTrue(verifies(hook.secret, request!))
          assert.strictEqual(request!.headers["x-cc-signature"], hex(hook.secret, request!))

          receiver.setDefault({ status: 500, body: "nope" })
          const failed = ok(yield* call("POST", `/api/v1/hooks/${hook.id}/ping`, { key }), 200).data
          assert.deepInclude(failed, { ok: false, status_code: 500, error: "The destination answered 500." })
          const sql = yield* SqlClient.SqlClient
          yield* sql`UPDATE webhook_subscriptions SET active = false, failure_count = 20 WHERE id = ${hook.id}`.pipe(Effect.orDie)
          receiver.setDefault(204)
          assert.deepInclude(ok(yield* call("POST", `/api/v1/hooks/${hook.id}/ping`, { key }), 200).data, { ok: true, status_code: 204 })
          assert.lengthOf(receiver.requests, 3)
          assert.deepStrictEqual((yield* deliveries(key, hook.id)).meta.total, 0)
          assert.deepInclude(yield* health(key, hook.id), { active: false, consecutive_failures: 20, last_failure_at: null, last_success_at: null })
          const other = yield* chamberWithKey("hooks:write")
          ok(yield* call("POST", `/api/v1/hooks/${hook.id}/ping`, { key: other.key }), 404)
          assert.lengthOf(receiver.requests, 3)
        })))

      it.effect("rotate-secret: both signatures during the overlap (new first), the new alone after it or with 0; rotating again ends the older one", () =>
        Effect.scoped(Effect.gen(function*() {
          const receiver = yield* relayed
          const { key, hook } = yield* subscribed(receiver)
          const old = hook.secret
          const rotated = ok(yield* call("POST", `/api/v1/hooks/${hook.id}/rotate-secret`, { key, body: { previous_expires_in: 2 } }), 200).data
          assert.deepStrictEqual(Object.keys(rotated), ["secret", "previous_expires_at"])
          assert.match(rotated.secret, /^whsec_[A-Za-z0-9+/]{43}=$/)
          assert.notStrictEqual(rotated.secret, old)
          const expires = Date.parse(rotated.previous_expires_at)
          assert.approximately(expires, Date.now() + 2_000, 1_500)
          // Re-posting the URL returns the current secret.
          assert.strictEqual(ok(yield* call("POST", "/api/v1/hooks", { key, body: { url: hook.url, events: ["member.created"] } }), 201).secret, rotated.secret)

          yield* member(key, "During")
          const [during] = yield* Effect.promise(() => receiver.waitFor(1))
          const signatures = String(during!.headers["webhook-signature"]).split(" ")
          assert.lengthOf(signatures, 2)
          // Each entry alone: which secret verifies it.
          const alone = (secret: string) => signatures.map((s) => verifies(secret, { ...during!, headers: { ...during!.headers, "webhook-signature": s } }))
          assert.deepStrictEqual(alone(rotated.secret), [true, false])
          assert.deepStrictEqual(alone(old), [false, true])
          assert.isTrue(verifies(rotated.secret, during!))
          assert.isTrue(verifies(old, during!))
          assert.strictEqual(during!.headers["x-cc-signature"], hex(rotated.secret, during!))
          assert.strictEqual(during!.headers["x-cc-signature-previous"], hex(old, during!))

          // Past the overlap: the new secret alone.
          yield* Effect.sleep(Math.max(0, expires - Date.now() + 100))
          yield* member(key, "After")
          const after = (yield* Effect.promise(() => receiver.waitFor(2)))[1]!
          assert.notInclude(String(after.headers["webhook-signature"]), " ")
          assert.isTrue(verifies(rotated.secret, after))
          assert.isFalse(verifies(old, after))
          assert.isUndefined(after.headers["x-cc-signature-previous"])

          // Rotating again ends the older one at once; 0 ends the previous one at once.
          const second = ok(yield* call("POST", `/api/v1/hooks/${hook.id}/rotate-secret`, { key, body: { previous_expires_in: 3600 } }), 200).data
          const third = ok(yield* call("POST", `/api/v1/hooks/${hook.id}/rotate-secret`, { key, body: {} }), 200).data
          assert.approximately(Date.parse(third.previous_expires_at), Date.now() + 86_400_000, 5_000)
          yield* member(key, "Third")
          const both = (yield* Effect.promise(() => receiver.waitFor(3)))[2]!
          assert.lengthOf(String(both.headers["webhook-signature"]).split(" "), 2)
          assert.isTrue(verifies(third.secret, both))
          assert.isTrue(verifies(second.secret, both))
          assert.isFalse(verifies(rotated.secret, both))
          const fourth = ok(yield* call("POST", `/api/v1/hooks/${hook.id}/rotate-secret`, { key, body: { previous_expires_in: 0 } }), 200).data
          yield* member(key, "Fourth")
          const last = (yield* Effect.promise(() => receiver.waitFor(4)))[3]!
          assert.notInclude(String(last.headers["webhook-signature"]), " ")
          assert.isTrue(verifies(fourth.secret, last))
          assert.isFalse(verifies(third.secret, last))
          assert.isUndefined(last.headers["x-cc-signature-previous"])

          for (const bad of [-1, 604_801, 1.5, "60"]) {
            assert.deepStrictEqual(Object.keys(ok(yield* call("POST", `/api/v1/hooks/${hook.id}/rotate-secret`, { key, body: { previous_expires_in: bad } }), 422).errors), ["previous_expires_in"], String(bad))
          }
          const other = yield* chamberWithKey("hooks:write")
          ok(yield* call("POST", `/api/v1/hooks/${hook.id}/rotate-secret`, { key: other.key, body: {} }), 404)
        })))
    })
  })

  describe(`webhook destinations on ${rt.name}`, () => {
    layer(serverOn(rt), { timeout: 120_000 })((it) => {
      it.effect("rotate-secret without a body (no Content-Length, as curl -X POST sends it, or Content-Length: 0) rotates with the default overlap; a body that is JSON but no object is still a 422", () =>
        Effect.gen(function*() {
          const url = yield* serverUrl
          const { key } = yield* chamberWithKey("hooks:write")
          const hook = ok(yield* call("POST", "/api/v1/hooks", { key, body: { url: "https://hooks.example.com/bodiless", events: ["member.created"] } }), 201)
          const path = `/api/v1/hooks/${hook.id}/rotate-secret`
          const secrets = [hook.secret as string]
          const rotations: ReadonlyArray<readonly [string, Effect.Effect<Raw>]> = [
            ["no Content-Length", bareSocketPost(url, path, key)],
            ["Content-Length: 0", nodeHttpPost(url, path, { authorization: `Bearer ${key}`, "content-length": "0" })],
            ["Content-Type: application/json, Content-Length: 0", nodeHttpPost(url, path, { authorization: `Bearer ${key}`, "content-type": "application/json", "content-length": "0" })]
          ]
          for (const [how, rotate] of rotations) {
            const reply = yield* rotate
            assert.strictEqual(reply.status, 200, `${how}: ${JSON.stringify(reply.body)}`)
            assert.deepStrictEqual(Object.keys(reply.body.data), ["secret", "previous_expires_at"], how)
            assert.notInclude(secrets, reply.body.data.secret, how)
            secrets.push(reply.body.data.secret)
            assert.approximately(Date.parse(reply.body.data.previous_expires_at), Date.now() + 86_400_000, 10_000, how)
            // The rotation took: re-posting the URL answers the new secret.
            assert.strictEqual(ok(yield* call("POST", "/api/v1/hooks", { key, body: { url: hook.url, events: ["member.created"] } }), 201).secret, reply.body.data.secret, how)
          }
          for (const body of ["null", "42", "[]", "\"x\"", "{"]) {
            const reply = yield* call("POST", path, { key, body })
            assert.deepStrictEqual([reply.status, Object.keys(reply.body.errors ?? {})], [422, ["body"]], `${body}: ${reply.text}`)
          }
          // A bodiless rotation of another chamber's subscription is still a 404.
          const other = yield* chamberWithKey("hooks:write")
          assert.strictEqual((yield* bareSocketPost(url, path, other.key)).status, 404)
          assert.strictEqual(ok(yield* call("POST", "/api/v1/hooks", { key, body: { url: hook.url, events: ["member.created"] } }), 201).secret, secrets.at(-1))
        }))

      it.effect("POST /hooks: a literal loopback, private, link-local, CGNAT, multicast or unspecified address is a 422 on url; names are not", () =>
        Effect.gen(function*() {
          const { key } = yield* chamberWithKey("hooks:write")
          const events = ["member.created"]
          for (
            const host of ["127.0.0.1", "127.1.2.3", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1", "224.0.0.1",
              "0.0.0.0", "0x7f.1", "2130706433", "[::1]", "[::]", "[fe80::1]", "[fd00::1]", "[ff02::1]", "[::ffff:127.0.0.1]", "[::ffff:10.0.0.1]"]
          ) {
            const reply = yield* call("POST", "/api/v1/hooks", { key, body: { url: `https://${host}/hook`, events } })
            assert.strictEqual(reply.status, 422, host)
            assert.deepStrictEqual(Object.keys(reply.body.errors), ["url"], host)
            assert.match(reply.body.errors.url[0], /^The url field must not name a .+ address: webhook destinations must be public\.$/, host)
          }
          for (const host of ["93.184.216.34", "[2606:4700::1111]", "localhost", "hooks.example.com"]) {
            ok(yield* call("POST", "/api/v1/hooks", { key, body: { url: `https://${host}/hook`, events } }), 201)
          }
        }))

      it.effect("ping: a name resolving to a refused address and a name that does not resolve are answered alike, naming no address", () =>
        Effect.gen(function*() {
          const { key } = yield* chamberWithKey("hooks:write")
          const pingOf = (url: string) =>
            Effect.gen(function*() {
              const hook = ok(yield* call("POST", "/api/v1/hooks", { key, body: { url, events: ["member.created"] } }), 201)
              return ok(yield* call("POST", `/api/v1/hooks/${hook.id}/ping`, { key }), 200).data
            })
          const internal = yield* pingOf("https://localhost:1/hook")
          const missing = yield* pingOf("https://hooks.nowhere.invalid/hook")
          for (const pinged of [internal, missing]) {
            assert.deepInclude(pinged, { ok: false, status_code: null, error: NOT_PUBLIC })
            assert.notMatch(pinged.error, /127\.0\.0\.1|::1|localhost|nowhere|resolve to a (loopback|private)/)
          }
        }))
    })
  })
}
