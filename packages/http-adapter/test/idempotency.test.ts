/**
 * Idempotency-Key over HTTP (ruling 28, docs/api.md "Retrying safely"), on every storage
 * runtime: a retry replays the kept answer byte for byte and changes nothing; what is kept and
 * what is not; scopes; the 409 while the first request runs; expiry after the retention.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import * as net from "node:net"
import { IdempotencyRepo, Outbox } from "@chamber/core"
import { runtimes } from "@chamber/pg-adapter/testing"
import { IdempotencyRetention } from "../src/index.ts"
import { anotherKey, call, chamberWithKey, type Reply, serverOn, serverUrl } from "./fixture.ts"

const SCOPES = "members:read,members:write,invoices:read,invoices:write,payments:read,payments:write"

let n = 0
const fresh = (what: string) => `${what}-${++n}-${Math.random().toString(36).slice(2)}`

const post = (key: string, path: string, body: unknown, idempotencyKey?: string) =>
  call("POST", path, { key, body, ...(idempotencyKey === undefined ? {} : { headers: { "idempotency-key": idempotencyKey } }) })

const memberCount = (key: string) => call("GET", "/api/v1/members", { key }).pipe(Effect.map((r) => r.body.meta.total as number))

const assertReplay = (first: Reply, again: Reply) => {
  assert.strictEqual(again.status, first.status)
  assert.strictEqual(again.text, first.text)
  assert.strictEqual(again.headers["idempotent-replayed"], "true")
  assert.strictEqual(first.headers["idempotent-replayed"], undefined)
}

/** A clock the test moves forward; everything else about it is the real one. */
const shiftedClock = () => {
  const live = Clock.Clock.defaultValue()
  let offsetMs = 0
  const clock: Clock.Clock = {
    currentTimeMillisUnsafe: () => live.currentTimeMillisUnsafe() + offsetMs,
    currentTimeMillis: Effect.sync(() => live.currentTimeMillisUnsafe() + offsetMs),
    currentTimeNanosUnsafe: () => live.currentTimeNanosUnsafe() + BigInt(offsetMs) * 1_000_000n,
    currentTimeNanos: Effect.sync(() => live.currentTimeNanosUnsafe() + BigInt(offsetMs) * 1_000_000n),
    monotonicTimeNanosUnsafe: () => live.monotonicTimeNanosUnsafe(),
    monotonicTimeNanos: live.monotonicTimeNanos,
    sleep: (duration) => live.sleep(duration)
  }
  return { clock, advance: (ms: number) => void (offsetMs += ms) }
}

/**
 * A POST whose body arrives in two parts over its own connection: the server has the request
 * (and claims its key) before the body is whole; `finish` sends the rest and reads the answer.
 */
const halfSent = (url: string, key: string, path: string, body: string, idempotencyKey: string) =>
  Effect.promise(() =>
    new Promise<{ finish: () => Promise<{ status: number; body: string }> }>((resolve, reject) => {
      const { port } = new URL(url)
      const socket = net.createConnection({ port: Number(port), host: "127.0.0.1" })
      let received = ""
      socket.setEncoding("utf8")
      socket.on("data", (chunk) => received += chunk)
      socket.once("error", reject)
      socket.once("connect", () => {
        const bytes = Buffer.from(body)
        socket.write(
          `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n` +
            `Content-Length: ${bytes.length}\r\nIdempotency-Key: ${idempotencyKey}\r\nConnection: close\r\n\r\n`
        )
        socket.write(bytes.subarray(0, 5))
        resolve({
          finish: () =>
            new Promise((done) => {
              socket.once("end", () => {
                const [head, ...rest] = received.split("\r\n\r\n")
                done({ status: Number(head!.split(" ")[1]), body: rest.join("\r\n\r\n") })
              })
              socket.write(bytes.subarray(5))
            })
        })
      })
    })
  )

/** Waits until the server holds a running claim of `value` (the first request got that far). */
const claimRunning = (value: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    for (;;) {
      const rows = yield* sql`SELECT 1 FROM idempotency_keys WHERE idempotency_key = ${value} AND owner IS NOT NULL`.pipe(Effect.orDie)
      if (rows.length === 1) return
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))
    }
  })

/** A POST /members of `name` whose body is half sent, once the server holds its key's claim. */
const createdSlowly = (key: string, name: string) =>
  Effect.gen(function*() {
    const ik = fresh("slow")
    const body = JSON.stringify({ name, status: "active" })
    const slow = yield* halfSent(yield* serverUrl, key, "/api/v1/members", body, ik)
    yield* claimRunning(ik)
    return { ik, body, slow }
  })

for (const rt of runtimes()) {
  describe(`Idempotency-Key on ${rt.name}`, () => {
    layer(serverOn(rt), { timeout: 120_000 })((it) => {
      it.effect("the same POST twice: one member, one event, byte-identical answers, the second marked replayed", () =>
        Effect.gen(function*() {
          const { tenant, key } = yield* chamberWithKey(SCOPES)
          const ik = fresh("create")
          const body = { name: "Acme & Sons", status: "active" }
          const first = yield* post(key, "/api/v1/members", body, ik)
          assert.strictEqual(first.status, 201, first.text)
          const again = yield* post(key, "/api/v1/members", body, ik)
          assertReplay(first, again)
          assert.strictEqual(yield* memberCount(key), 1)
          assert.strictEqual((yield* (yield* Outbox).list(tenant.id, { type: "member.created" })).length, 1)
          // Without the header nothing changes: a second member.
          assert.strictEqual((yield* post(key, "/api/v1/members", body)).status, 201)
          assert.strictEqual(yield* memberCount(key), 2)
        }))

      it.effect("the OpenAPI document states the header, the 409 and the replay field on every POST and PATCH, and on nothing else", () =>
        Effect.gen(function*() {
          const doc = (yield* call("GET", "/api/v1/openapi.json")).body
          assert.strictEqual(doc.components.parameters.IdempotencyKey.name, "Idempotency-Key")
          let writes = 0
          for (const [path, item] of Object.entries<Record<string, any>>(doc.paths)) {
            for (const [method, op] of Object.entries<any>(item)) {
              const declares = (op.parameters ?? []).some((p: any) => p.$ref === "#/components/parameters/IdempotencyKey")
              const where = `${method.toUpperCase()} ${path}`
              if (method !== "post" && method !== "patch") {
                assert.isFalse(declares, where)
                assert.notProperty(op.responses, "409", where)
                continue
              }
              writes++
              assert.isTrue(declares, where)
              assert.property(op.responses["409"].headers, "Retry-After", where)
              for (const [status, response] of Object.entries<any>(op.responses)) {
                if (status.startsWith("2")) assert.property(response.headers, "Idempotent-Replayed", `${where} ${status}`)
              }
            }
          }
          assert.isAtLeast(writes, 10)
        }))

      it.effect("a payment retried with its key records one payment; a PATCH retried replays too", () =>
        Effect.gen(function*() {
          const { key } = yield* chamberWithKey(SCOPES)
          const member = yield* post(key, "/api/v1/members", { name: "Billed", status: "active" })
          const invoice = yield* post(key, "/api/v1/invoices", { member_id: member.body.data.id, lines: [{ description: "Dues", unit: "300.00" }] })
          assert.strictEqual((yield* post(key, `/api/v1/invoices/${invoice.body.data.id}/issue`, undefined)).status, 200)
          const ik = fresh("pay")
          const payment = { method: "check", amount: "100.00", received_on: "2026-11-20" }
          const first = yield* post(key, `/api/v1/invoices/${invoice.body.data.id}/payments`, payment, ik)
          assert.strictEqual(first.status, 201, first.text)
          assertReplay(first, yield* post(key, `/api/v1/invoices/${invoice.body.data.id}/payments`, payment, ik))
          assert.strictEqual((yield* call("GET", "/api/v1/payments", { key })).body.meta.total, 1)
          // A business-rule 422 is kept too: the overpayment is refused again by replay.
          const overKey = fresh("overpay")
          const over = { method: "check", amount: "900.00", received_on: "2026-11-20" }
          const refused = yield* post(key, `/api/v1/invoices/${invoice.body.data.id}/payments`, over, overKey)
          assert.strictEqual(refused.status, 422, refused.text)
          assert.deepStrictEqual(Object.keys(refused.body), ["message"])
          assertReplay(refused, yield* post(key, `/api/v1/invoices/${invoice.body.data.id}/payments`, over, overKey))
          assert.strictEqual((yield* call("GET", "/api/v1/payments", { key })).body.meta.total, 1)

          const patchKey = fresh("patch")
          const patch = (phone: string) =>
            call("PATCH", `/api/v1/members/${member.body.data.id}`, { key, body: { phone }, headers: { "idempotency-key": patchKey } })
          const patched = yield* patch("555-0100")
          assert.strictEqual(patched.status, 200, patched.text)
          assertReplay(patched, yield* patch("555-0100"))
          assert.strictEqual((yield* patch("555-0199")).status, 422)
        }))

      it.effect("the same key with another body, path or method: 422 {message}; nothing is created", () =>
        Effect.gen(function*() {
          const { key } = yield* chamberWithKey(SCOPES)
          const ik = fresh("other")
          assert.strictEqual((yield* post(key, "/api/v1/members", { name: "First", status: "active" }, ik)).status, 201)
          const elsewhere = [
            yield* post(key, "/api/v1/members", { name: "Second", status: "active" }, ik),
            yield* call("PATCH", "/api/v1/members/1", { key, body: { name: "First", status: "active" }, headers: { "idempotency-key": ik } }),
            yield* post(key, "/api/v1/invoices", { name: "First", status: "active" }, ik)
          ]
          for (const reused of elsewhere) {
            assert.strictEqual(reused.status, 422, reused.text)
            assert.deepStrictEqual(reused.body, { message: "This Idempotency-Key was used with a different request." })
          }
          assert.strictEqual(yield* memberCount(key), 1)
        }))

      it.effect("a malformed key is a 422 on idempotency_key, and nothing is created", () =>
        Effect.gen(function*() {
          const { key } = yield* chamberWithKey(SCOPES)
          for (const bad of ["", "a".repeat(256), "has space", "é-accent", "tab\tinside"]) {
            const reply = yield* post(key, "/api/v1/members", { name: "Bad key", status: "active" }, bad)
            assert.strictEqual(reply.status, 422, `${JSON.stringify(bad)}: ${reply.text}`)
            assert.deepStrictEqual(Object.keys(reply.body.errors), ["idempotency_key"])
          }
          assert.strictEqual(yield* memberCount(key), 0)
          const longest = yield* post(key, "/api/v1/members", { name: "Good key", status: "active" }, "!~".repeat(127) + "z")
          assert.strictEqual(longest.status, 201, longest.text)
        }))

      it.effect("a request its API key may not make (403) keeps nothing and holds no claim: the value then runs afresh", () =>
        Effect.gen(function*() {
          const { key } = yield* chamberWithKey("members:read,members:write")
          const ik = fresh("refused")
          const forbidden = yield* post(key, "/api/v1/invoices", { member_id: 1, lines: [{ description: "Dues", unit: "1.00" }] }, ik)
          assert.strictEqual(forbidden.status, 403, forbidden.text)
          const created = yield* post(key, "/api/v1/members", { name: "After A 403", status: "active" }, ik)
          assert.strictEqual(created.status, 201, created.text)
          assert.strictEqual(created.headers["idempotent-replayed"], undefined)
          const unknown = yield* post(`cck_${"x".repeat(40)}`, "/api/v1/members", { name: "No Such Key", status: "active" }, ik)
          assert.strictEqual(unknown.status, 401, unknown.text)
          assertReplay(created, yield* post(key, "/api/v1/members", { name: "After A 403", status: "active" }, ik))
          assert.strictEqual(yield* memberCount(key), 1)
        }))

      it.effect("a body validation 422 is not kept: the corrected retry with the same key creates the member", () =>
        Effect.gen(function*() {
          const { key } = yield* chamberWithKey(SCOPES)
          const ik = fresh("fix")
          const bad = yield* post(key, "/api/v1/members", { name: "Fixed", status: "deleted" }, ik)
          assert.strictEqual(bad.status, 422)
          assert.deepStrictEqual(Object.keys(bad.body.errors), ["status"])
          const good = yield* post(key, "/api/v1/members", { name: "Fixed", status: "active" }, ik)
          assert.strictEqual(good.status, 201, good.text)
          assert.strictEqual(good.headers["idempotent-replayed"], undefined)
          // The corrected request is the one the key now keeps.
          assertReplay(good, yield* post(key, "/api/v1/members", { name: "Fixed", status: "active" }, ik))
          assert.strictEqual(yield* memberCount(key), 1)
        }))

      it.effect("a 404 and the core's own 422 (a taken slug) are kept: replayed even once the row exists or the slug is free", () =>
        Effect.gen(function*() {
          const { key } = yield* chamberWithKey(SCOPES)
          const ik = fresh("missing")
          const missing = yield* call("PATCH", "/api/v1/members/999999", { key, body: { phone: "1" }, headers: { "idempotency-key": ik } })
          assert.strictEqual(missing.status, 404)
          assertReplay(missing, yield* call("PATCH", "/api/v1/members/999999", { key, body: { phone: "1" }, headers: { "idempotency-key": ik } }))

          const owner = yield* post(key, "/api/v1/members", { name: "Slug Owner", status: "active", slug: "taken-slug" })
          const slugKey = fresh("slug")
          const other = { name: "Other", status: "active", slug: "taken-slug" }
          const taken = yield* post(key, "/api/v1/members", other, slugKey)
          assert.strictEqual(taken.status, 422, taken.text)
          assert.strictEqual((yield* call("PATCH", `/api/v1/members/${owner.body.data.id}`, { key, body: { slug: "moved-slug" } })).status, 200)
          assertReplay(taken, yield* post(key, "/api/v1/members", other, slugKey))
          assert.strictEqual(yield* memberCount(key), 1)
        }))

      it.effect("two API keys of one chamber use the same value independently", () =>
        Effect.gen(function*() {
          const { tenant, key } = yield* chamberWithKey(SCOPES)
          const other = yield* anotherKey(tenant.id, SCOPES)
          const ik = fresh("shared")
          const a = yield* post(key, "/api/v1/members", { name: "From A", status: "active" }, ik)
          const b = yield* post(other, "/api/v1/members", { name: "From B", status: "active" }, ik)
          assert.strictEqual(a.status, 201)
          assert.strictEqual(b.status, 201, b.text)
          assert.strictEqual(b.headers["idempotent-replayed"], undefined)
          assert.notStrictEqual(a.body.data.id, b.body.data.id)
          // Each key replays its own answer.
          assertReplay(a, yield* post(key, "/api/v1/members", { name: "From A", status: "active" }, ik))
          assertReplay(b, yield* post(other, "/api/v1/members", { name: "From B", status: "active" }, ik))
          assert.strictEqual(yield* memberCount(key), 2)
        }))

      it.effect("while the first request with a key runs, another answers 409 with Retry-After: 1; then it replays", () =>
        Effect.gen(function*() {
          const { key } = yield* chamberWithKey(SCOPES)
          const { ik, body, slow } = yield* createdSlowly(key, "Slow Upload")
          const meanwhile = yield* post(key, "/api/v1/members", body, ik)
          assert.strictEqual(meanwhile.status, 409, meanwhile.text)
          assert.strictEqual(meanwhile.headers["retry-after"], "1")
          assert.deepStrictEqual(Object.keys(meanwhile.body), ["message"])
          const first = yield* Effect.promise(() => slow.finish())
          assert.strictEqual(first.status, 201, first.body)
          const again = yield* post(key, "/api/v1/members", body, ik)
          assert.strictEqual(again.text, first.body)
          assert.strictEqual(again.headers["idempotent-replayed"], "true")
          assert.strictEqual(yield* memberCount(key), 1)
        }))

      if (rt.name === "postgres") {
        it.effect("the 409 does not wait on the first request's transaction: it is held on a lock inside it", () =>
          Effect.gen(function*() {
            const { key } = yield* chamberWithKey(SCOPES)
            const sql = yield* SqlClient.SqlClient
            const ik = fresh("locked")
            const body = { name: "Waits On A Lock", status: "active" }
            const locked = yield* Deferred.make<void>()
            const release = yield* Deferred.make<void>()
            // Another session holds a lock every member insert needs, until told to let go.
            const holder = yield* sql.withTransaction(Effect.gen(function*() {
              yield* sql`LOCK TABLE members IN SHARE MODE`
              yield* Deferred.succeed(locked, undefined)
              yield* Deferred.await(release)
            })).pipe(Effect.orDie, Effect.forkChild)
            yield* Deferred.await(locked)
            const first = yield* Effect.forkChild(post(key, "/api/v1/members", body, ik))
            yield* claimRunning(ik)
            const meanwhile = yield* post(key, "/api/v1/members", body, ik)
            assert.strictEqual(meanwhile.status, 409, meanwhile.text)
            assert.strictEqual(meanwhile.headers["retry-after"], "1")
            yield* Deferred.succeed(release, undefined)
            yield* Fiber.join(holder)
            const answered = yield* Fiber.join(first)
            assert.strictEqual(answered.status, 201, answered.text)
            assertReplay(answered, yield* post(key, "/api/v1/members", body, ik))
            assert.strictEqual(yield* memberCount(key), 1)
          }))
      }
    })
  })

  describe(`Idempotency-Key retention on ${rt.name}`, () => {
    const time = shiftedClock()
    const HOUR = 3_600_000
    const server = serverOn(rt).pipe(
      Layer.provide(Layer.succeed(Clock.Clock)(time.clock)),
      Layer.provide(Layer.succeed(IdempotencyRetention)(2 * HOUR))
    )
    layer(server, { timeout: 120_000 })((it) => {
      it.effect("a kept answer is replayed within the retention; after it the key runs afresh", () =>
        Effect.gen(function*() {
          const { key } = yield* chamberWithKey(SCOPES)
          const ik = fresh("expiring")
          const body = { name: "Kept A While", status: "active" }
          const first = yield* post(key, "/api/v1/members", body, ik)
          time.advance(HOUR)
          assertReplay(first, yield* post(key, "/api/v1/members", body, ik))
          time.advance(HOUR + 1_000)
          const later = yield* post(key, "/api/v1/members", body, ik)
          assert.strictEqual(later.status, 201, later.text)
          assert.strictEqual(later.headers["idempotent-replayed"], undefined)
          assert.strictEqual(yield* memberCount(key), 2)
        }))

      it.effect("a claim whose request stopped answering frees its key after its lease; the late first request then changes nothing", () =>
        Effect.gen(function*() {
          const { key } = yield* chamberWithKey(SCOPES)
          const { ik, body, slow: stalled } = yield* createdSlowly(key, "Abandoned Upload")
          assert.strictEqual((yield* post(key, "/api/v1/members", body, ik)).status, 409)
          time.advance(61_000)
          const takeover = yield* post(key, "/api/v1/members", body, ik)
          assert.strictEqual(takeover.status, 201, takeover.text)
          const late = yield* Effect.promise(() => stalled.finish())
          assert.strictEqual(late.status, 409, late.body)
          assertReplay(takeover, yield* post(key, "/api/v1/members", body, ik))
          assert.strictEqual(yield* memberCount(key), 1)
        }))

      it.effect("expired keys are pruned oldest first, at most a batch a statement", () =>
        Effect.gen(function*() {
          const { key } = yield* chamberWithKey(SCOPES)
          const repo = yield* IdempotencyRepo
          const sql = yield* SqlClient.SqlClient
          for (let i = 0; i < 3; i++) yield* post(key, "/api/v1/members", { name: `Pruned ${i}`, status: "active" }, fresh("prune"))
          const count = sql<{ n: number }>`SELECT count(*)::int AS n FROM idempotency_keys`.pipe(Effect.orDie, Effect.map(([r]) => r!.n))
          const before = yield* count
          time.advance(3 * HOUR)
          const now = time.clock.currentTimeMillisUnsafe()
          const fresher = yield* post(key, "/api/v1/members", { name: "Kept", status: "active" }, fresh("prune"))
          assert.strictEqual(fresher.status, 201)
          let batches = 0
          let deleted = 0
          for (;;) {
            const n = yield* repo.prune(now - 2 * HOUR, now, 2)
            assert.isAtMost(n, 2)
            deleted += n
            if (n === 0) break
            batches++
          }
          assert.strictEqual(deleted, before)
          assert.isAtLeast(batches, Math.ceil(before / 2))
          assert.strictEqual(yield* count, 1)
        }))
    })
  })
}
