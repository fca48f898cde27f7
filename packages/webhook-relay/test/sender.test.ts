import { afterAll, assert, beforeAll, beforeEach, describe, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer as createTcpServer, type AddressInfo, type LookupFunction, type Server as TcpServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { generate } from "selfsigned"
import { Webhook } from "standardwebhooks"
import type { OutboxEvent } from "@chamber/core"
import {
  closeSenders,
  deliveryBody,
  deliveryHeaders,
  EXCERPT_BYTES,
  makeSender,
  NOT_PUBLIC,
  send,
  sendEffect,
  type SendRequest,
  verify,
  verifyStandard
} from "../src/index.ts"
import { type Receiver, startReceiver } from "./receiver.ts"

const secret = "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
const event: OutboxEvent = {
  id: "evt_0001",
  tenant_id: 1,
  type: "member.created",
  created_at: "2026-11-22T10:00:00.000Z",
  data: { id: 7, attributes: { name: "Café Ünïcode ✓ 𝄞" }, created_at: null, updated_at: null }
}

let receiver: Receiver
beforeAll(async () => {
  receiver = await startReceiver()
})
afterAll(async () => {
  closeSenders()
  await receiver.close()
})
beforeEach(() => receiver.reset())

/** A delivery to the receiver, trusted and allowed, unless the test says otherwise. */
const deliver = (overrides: Partial<SendRequest> = {}) => {
  const body = deliveryBody(event)
  return send({
    url: `${receiver.url}/hooks/chamber`,
    headers: deliveryHeaders(event, secret, body, new Date()),
    body,
    timeoutMs: 5000,
    allowPrivate: true,
    ca: receiver.ca,
    ...overrides
  })
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe("send", () => {
  it("a 2xx is a success; the receiver gets one POST with the exact signed bytes, both signatures verifying", async () => {
    receiver.script({ status: 202, body: "accepted" })
    const body = deliveryBody(event)
    const headers = deliveryHeaders(event, secret, body, new Date())
    const result = await send({
      url: `${receiver.url}/hooks/chamber?x=1`,
      headers,
      body,
      timeoutMs: 5000,
      allowPrivate: true,
      ca: receiver.ca
    })
    assert.deepInclude(result, { ok: true, status: 202, responseExcerpt: "accepted", error: null, failure: null, retryAfterSeconds: null })
    assert.isTrue(result.latencyMs >= 0)
    assert.lengthOf(receiver.requests, 1)
    const got = receiver.requests[0]!
    assert.strictEqual(got.method, "POST")
    assert.strictEqual(got.path, "/hooks/chamber?x=1")
    assert.isTrue(got.body.equals(Buffer.from(body, "utf8")), "the bytes received are the bytes signed")
    assert.strictEqual(got.headers["content-length"], String(Buffer.byteLength(body)))
    for (const [name, value] of Object.entries(headers)) assert.strictEqual(got.headers[name], value, name)
    // The receiver's side: verify what arrived, as received.
    const text = got.body.toString("utf8")
    const h = (name: string) => String(got.headers[name])
    assert.isTrue(verify(secret, text, h("x-cc-signature")))
    assert.isTrue(verifyStandard(secret, h("webhook-id"), h("webhook-timestamp"), text, h("webhook-signature")))
    assert.deepStrictEqual(
      new Webhook(secret).verify(text, { "webhook-id": h("webhook-id"), "webhook-timestamp": h("webhook-timestamp"), "webhook-signature": h("webhook-signature") }),
      JSON.parse(body)
    )
  })

  it("a 500 is a failure with its status and the first 1 KiB of its body", async () => {
    const long = "x".repeat(EXCERPT_BYTES - 1) + "yz" + "w".repeat(3000)
    receiver.script({ status: 500, body: long })
    const result = await deliver()
    assert.deepInclude(result, { ok: false, status: 500, failure: "status", error: "The destination answered 500.", retryAfterSeconds: null })
    assert.strictEqual(result.responseExcerpt, long.slice(0, EXCERPT_BYTES))
    assert.strictEqual(EXCERPT_BYTES, 1024)
  })

  it("the excerpt is text: a character cut by the 1 KiB limit is dropped, not mangled", async () => {
    receiver.script({ status: 400, body: "a" + "é".repeat(1000) })
    const result = await deliver()
    assert.strictEqual(result.responseExcerpt, "a" + "é".repeat(511))
  })

  it("only a 2xx succeeds: 204 and 299 do; 304, 404 and 410 do not", async () => {
    for (const [status, ok] of [[204, true], [299, true], [304, false], [404, false], [410, false]] as const) {
      receiver.script(status)
      const result = await deliver()
      assert.strictEqual(result.ok, ok, String(status))
      assert.strictEqual(result.status, status)
    }
  })

  it("a receiver that never answers fails after the timeout, and the attempt ends", async () => {
    receiver.script({ hang: true })
    const result = await deliver({ timeoutMs: 300 })
    assert.deepInclude(result, { ok: false, status: null, failure: "timeout", responseExcerpt: null })
    assert.strictEqual(result.error, "The destination did not answer within 300 ms.")
    assert.isTrue(result.latencyMs >= 290, String(result.latencyMs))
    assert.lengthOf(receiver.requests, 1)
    while (receiver.openConnections() > 0) await sleep(10) // the hung connection is dropped by the sender
  })

  it("the timeout covers connect and TLS: a server that accepts but never speaks TLS is cut off too", async () => {
    const silent: TcpServer = createTcpServer(() => {})
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve))
    try {
      const port = (silent.address() as AddressInfo).port
      const result = await deliver({ url: `https://127.0.0.1:${port}/`, timeoutMs: 300 })
      assert.deepInclude(result, { ok: false, status: null, failure: "timeout" })
    } finally {
      silent.close()
    }
  })

  it("a 301 is a failure and its Location is not followed: the receiver sees one request", async () => {
    receiver.script({ redirect: "/elsewhere" })
    const result = await deliver()
    assert.deepInclude(result, { ok: false, status: 301, failure: "redirect" })
    assert.strictEqual(result.error, "The destination answered 301 redirecting to /elsewhere; redirects are not followed.")
    await sleep(50)
    assert.deepStrictEqual(receiver.requests.map((r) => r.path), ["/hooks/chamber"])
  })

  it("a 429 or 503 with Retry-After gives retryAfterSeconds; garbage, or another status, gives null", async () => {
    receiver.script(
      { status: 429, retryAfter: "5" },
      { status: 503, retryAfter: new Date(Date.now() + 120_000).toUTCString() },
      { status: 429, retryAfter: "soon" },
      { status: 500, retryAfter: "5" },
      429
    )
    const [a, b, c, d, e] = [await deliver(), await deliver(), await deliver(), await deliver(), await deliver()]
    assert.deepInclude(a, { ok: false, status: 429, retryAfterSeconds: 5, failure: "status" })
    assert.strictEqual(b.status, 503)
    assert.isTrue(b.retryAfterSeconds !== null && b.retryAfterSeconds > 100 && b.retryAfterSeconds <= 121, String(b.retryAfterSeconds))
    assert.deepInclude(c, { status: 429, retryAfterSeconds: null })
    assert.deepInclude(d, { status: 500, retryAfterSeconds: null })
    assert.deepInclude(e, { status: 429, retryAfterSeconds: null })
  })

  it("refuses a loopback destination when private ones are not allowed, sending nothing; the address is the operator's detail only", async () => {
    const literal = await deliver({ allowPrivate: false })
    assert.deepInclude(literal, { ok: false, status: null, failure: "refused-destination", error: NOT_PUBLIC, detail: "127.0.0.1: loopback address" })
    const mapped = await deliver({ allowPrivate: false, url: `https://[::ffff:127.0.0.1]:${receiver.port}/` })
    assert.deepInclude(mapped, { failure: "refused-destination", error: NOT_PUBLIC })
    assert.match(mapped.detail!, /loopback \(IPv4-mapped\) address/)
    const named = await deliver({ allowPrivate: false, url: `https://localhost:${receiver.port}/` })
    assert.deepInclude(named, { failure: "refused-destination", error: NOT_PUBLIC })
    assert.match(named.detail!, /^localhost resolved to (127\.0\.0\.1|::1): loopback address$/)
    assert.lengthOf(receiver.requests, 0)
  })

  it("with private destinations allowed, link-local and metadata addresses are still refused, named or literal, before any connection", async () => {
    // The lookups this sender makes, and what they answered: a name leading to the metadata service among others.
    const answers: Record<string, ReadonlyArray<{ address: string; family: number }>> = {
      "metadata.test": [{ address: "169.254.169.254", family: 4 }],
      "mixed.test": [{ address: "127.0.0.1", family: 4 }, { address: "fe80::1", family: 6 }],
      "aws6.test": [{ address: "fd00:ec2::254", family: 6 }],
      "alibaba.test": [{ address: "100.100.100.200", family: 4 }],
      "localhost": [{ address: "127.0.0.1", family: 4 }]
    }
    const resolve: LookupFunction = (hostname, options, callback) => {
      const found = answers[hostname] ?? []
      setImmediate(() => (options.all === true ? callback(null, [...found]) : callback(null, found[0]!.address, found[0]!.family)))
    }
    const sender = makeSender({ resolve, ca: receiver.ca, allowPrivate: true })
    try {
      const attempt = (url: string) => sender.send({ url, headers: {}, body: "{}", timeoutMs: 5_000 })
      for (const host of ["metadata.test", "mixed.test", "aws6.test", "alibaba.test"]) {
        const refused = await attempt(`https://${host}:${receiver.port}/`)
        assert.deepInclude(refused, { ok: false, status: null, failure: "refused-destination", error: NOT_PUBLIC }, host)
      }
      for (const literal of ["169.254.169.254", "[::ffff:169.254.169.254]", "[fe80::1]", "[fd00:ec2::254]", "169.254.170.2", "[64:ff9b::a9fe:a9fe]"]) {
        const refused = await attempt(`https://${literal}:${receiver.port}/`)
        assert.deepInclude(refused, { ok: false, status: null, failure: "refused-destination", error: NOT_PUBLIC }, literal)
      }
      assert.lengthOf(receiver.requests, 0)
      // The same sender reaches a loopback receiver: the setting is on, and only those ranges stay shut.
      assert.deepInclude(await attempt(`https://localhost:${receiver.port}/`), { ok: true, status: 200 })
      assert.lengthOf(receiver.requests, 1)
    } finally {
      sender.close()
    }
  })

  it("the address checked is the address connected to: a name resolved to loopback is refused, or reached when allowed", async () => {
    let lookups = 0
    const rebinding: LookupFunction = (_hostname, options, callback) => {
      lookups++
      const address = { address: "127.0.0.1", family: 4 }
      setImmediate(() => (options.all === true ? callback(null, [address]) : callback(null, address.address, address.family)))
    }
    const guarded = makeSender({ resolve: rebinding, ca: receiver.ca })
    const open = makeSender({ resolve: rebinding, ca: receiver.ca, allowPrivate: true })
    try {
      // The certificate names 127.0.0.1 and localhost, so the name used is "localhost", resolved by the resolver above.
      const body = deliveryBody(event)
      const request = { url: `https://localhost:${receiver.port}/`, headers: {}, body, timeoutMs: 5000 }
      const refused = await guarded.send(request)
      assert.deepInclude(refused, { failure: "refused-destination", error: NOT_PUBLIC, detail: "localhost resolved to 127.0.0.1: loopback address" })
      assert.lengthOf(receiver.requests, 0)
      const reached = await open.send(request)
      assert.deepInclude(reached, { ok: true, status: 200 })
      assert.lengthOf(receiver.requests, 1)
      assert.strictEqual(lookups, 2)
    } finally {
      guarded.close()
      open.close()
    }
  })

  it("https only: an http: URL or no URL at all fails without a connection", async () => {
    const plain = await deliver({ url: `http://127.0.0.1:${receiver.port}/` })
    assert.deepInclude(plain, { ok: false, failure: "invalid-url", error: "Webhook destinations must be https; \"http:\" URLs are not delivered to." })
    const junk = await deliver({ url: "not a url" })
    assert.deepInclude(junk, { ok: false, failure: "invalid-url", error: "The destination \"not a url\" is not a URL." })
    assert.lengthOf(receiver.requests, 0)
  })

  it("an untrusted certificate is a TLS failure unless its CA is given", async () => {
    const untrusted = await deliver({ ca: undefined })
    assert.deepInclude(untrusted, { ok: false, status: null, failure: "tls" })
    assert.match(untrusted.error!, /^TLS failed with the destination: .*\(DEPTH_ZERO_SELF_SIGNED_CERT\)\.$/)
    assert.lengthOf(receiver.requests, 0)
    assert.deepInclude(await deliver(), { ok: true })
  })

  it("NODE_EXTRA_CA_CERTS is trusted as it is (a process started with it reaches the receiver), `ca` adding to it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "relay-ca-"))
    try {
      const caFile = join(dir, "receiver.pem")
      writeFileSync(caFile, receiver.ca)
      const sender = fileURLToPath(new URL("../src/Sender.ts", import.meta.url))
      const script = `const { send } = await import(${JSON.stringify(sender)});
        const ca = process.argv[2] === undefined ? undefined : process.argv[2];
        const result = await send({ url: process.argv[1], headers: {}, body: "{}", timeoutMs: 5000, allowPrivate: true, ca });
        console.log(JSON.stringify(result)); process.exit(0)`
      const run = (env: NodeJS.ProcessEnv, ca?: string) =>
        new Promise<{ ok: boolean; failure: string | null }>((resolve, reject) =>
          execFile(process.execPath, ["--input-type=module", "-e", script, receiver.url, ...(ca === undefined ? [] : [ca])], { env }, (error, stdout) =>
            error === null ? resolve(JSON.parse(stdout)) : reject(error)
          )
        )
      const env = { ...process.env }
      delete env.NODE_EXTRA_CA_CERTS
      assert.deepInclude(await run({ ...env, NODE_EXTRA_CA_CERTS: caFile }), { ok: true, failure: null })
      assert.deepInclude(await run(env), { ok: false, failure: "tls" })
      // `ca` adds to Node's trust, NODE_EXTRA_CA_CERTS included, rather than replacing it.
      const other = await generate([{ name: "commonName", value: "another.test" }], { keyType: "ec", algorithm: "sha256" })
      assert.deepInclude(await run({ ...env, NODE_EXTRA_CA_CERTS: caFile }, other.cert), { ok: true, failure: null })
      assert.deepInclude(await run(env, other.cert), { ok: false, failure: "tls" })
      assert.lengthOf(receiver.requests, 2)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it("a connection refused or reset is a failure, never an exception", async () => {
    const probe: TcpServer = createTcpServer()
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve))
    const port = (probe.address() as AddressInfo).port
    await new Promise<void>((resolve) => probe.close(() => resolve()))
    const refused = await deliver({ url: `https://127.0.0.1:${port}/` })
    // The chamber is told the code; the address connected to is the operator's detail.
    assert.deepInclude(refused, { ok: false, status: null, failure: "connection", error: "The connection to the destination failed (ECONNREFUSED)." })
    assert.match(refused.detail!, /^127\.0\.0\.1: connect ECONNREFUSED 127\.0\.0\.1:\d+$/)
    receiver.script({ reset: true })
    const reset = await deliver()
    assert.deepInclude(reset, { ok: false, status: null, failure: "connection" })
    assert.match(reset.error!, /ECONNRESET/)
    assert.notInclude(reset.error!, "127.0.0.1")
  })

  it("a name that does not resolve reads exactly like a name resolving to a refused address: no internal DNS is mapped", async () => {
    // An internal zone: one name resolves to a private address, others exist nowhere or time out.
    const internal: LookupFunction = (hostname, options, callback) => {
      if (hostname === "billing.corp.test") {
        const address = { address: "10.20.30.40", family: 4 }
        return setImmediate(() => (options.all === true ? callback(null, [address]) : callback(null, address.address, address.family)))
      }
      const code = hostname === "slow.corp.test" ? "EAI_AGAIN" : "ENOTFOUND"
      const error: NodeJS.ErrnoException = new Error(`getaddrinfo ${code} ${hostname}`)
      error.code = code
      setImmediate(() => callback(error, ""))
    }
    const sender = makeSender({ resolve: internal })
    try {
      const attempt = (host: string) => sender.send({ url: `https://${host}/x`, headers: {}, body: "{}", timeoutMs: 5000 })
      const [existing, missing, slow, literal] = await Promise.all([
        attempt("billing.corp.test"),
        attempt("nothing.corp.test"),
        attempt("slow.corp.test"),
        attempt("10.20.30.40")
      ])
      for (const result of [existing, missing, slow, literal]) {
        assert.deepInclude(result, { ok: false, status: null, responseExcerpt: null, error: NOT_PUBLIC, retryAfterSeconds: null })
        assert.notInclude(result.error!, "10.20.30.40")
        assert.notInclude(result.error!, "corp.test")
      }
      // The operator still tells them apart (metrics by kind, the debug log line).
      assert.deepInclude(existing, { failure: "refused-destination", detail: "billing.corp.test resolved to 10.20.30.40: private address" })
      assert.deepInclude(missing, { failure: "dns", detail: "nothing.corp.test did not resolve (ENOTFOUND)" })
      assert.deepInclude(slow, { failure: "dns", detail: "slow.corp.test did not resolve (EAI_AGAIN)" })
    } finally {
      sender.close()
    }
  })

  it("an aborted signal ends the attempt as a failure; interrupting sendEffect drops the connection", async () => {
    receiver.script({ hang: true }, { hang: true })
    const controller = new AbortController()
    const pending = deliver({ signal: controller.signal })
    await receiver.waitFor(1)
    controller.abort()
    assert.deepInclude(await pending, { ok: false, failure: "aborted", status: null })

    const body = deliveryBody(event)
    const fiber = Effect.runFork(sendEffect({ url: receiver.url, headers: {}, body, timeoutMs: 60_000, allowPrivate: true, ca: receiver.ca }))
    await receiver.waitFor(2)
    await Effect.runPromise(Fiber.interrupt(fiber))
    while (receiver.openConnections() > 0) await sleep(10)
    receiver.script(201)
    const result = await Effect.runPromise(sendEffect({ url: receiver.url, headers: {}, body, timeoutMs: 5000, allowPrivate: true, ca: receiver.ca }))
    assert.deepInclude(result, { ok: true, status: 201 })
  })

  it("keeps connections alive between deliveries, and bounds them per destination", async () => {
    const sender = makeSender({ allowPrivate: true, ca: receiver.ca, maxSocketsPerHost: 2 })
    try {
      const body = deliveryBody(event)
      const request = { url: receiver.url, headers: {}, body, timeoutMs: 5000 }
      assert.isTrue((await sender.send(request)).ok)
      assert.isTrue((await sender.send(request)).ok)
      const [first, second] = receiver.requests
      assert.strictEqual(first!.connection, second!.connection, "the second delivery reused the first one's connection")
      receiver.reset()
      receiver.setDefault({ status: 200, body: "ok", delayMs: 50 })
      const results = await Promise.all(Array.from({ length: 6 }, () => sender.send(request)))
      assert.isTrue(results.every((r) => r.ok))
      assert.lengthOf(receiver.requests, 6)
      assert.isAtMost(new Set(receiver.requests.map((r) => r.connection)).size, 2)
    } finally {
      receiver.setDefault({ status: 200, body: "ok" })
      sender.close()
    }
  })
})
