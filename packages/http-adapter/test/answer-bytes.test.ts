/**
 * Large answers are written from buffers used again once Node has written an answer out
 * (server/AnswerBytes.ts): every answer arrives whole and as it was made, also to clients that
 * stop reading mid-answer while other requests of the same size are answered; a buffer serves
 * no other answer before its response has finished.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { runtimes } from "@chamber/pg-adapter/testing"
import { EventEmitter } from "node:events"
import { connect } from "node:net"
import { bytesFor } from "../src/server/AnswerBytes.ts"
import { call, chamberWithKey, serverOn, serverUrl } from "./fixture.ts"

/** A chamber of 100 members whose `about` texts are long and its own: a page of about half a megabyte. */
const chamberOfLongPages = (letter: string) =>
  Effect.gen(function*() {
    const { key } = yield* chamberWithKey("members:read,members:write")
    yield* Effect.forEach(Array.from({ length: 100 }, (_, i) => i), (i) =>
      call("POST", "/api/v1/members", { key, body: { name: `${letter} ${String(i).padStart(3, "0")}`, status: "active", about: `${letter}${i}.`.repeat(2000).slice(0, 4999) + letter } }).pipe(
        Effect.tap((reply) => Effect.sync(() => assert.strictEqual(reply.status, 201, reply.text)))
      ), { concurrency: 8 })
    return key
  })

/** The bodies of the HTTP/1.1 answers in `bytes`, one after the other, by their Content-Length. */
const bodiesOf = (bytes: Buffer) => {
  const bodies: Array<string> = []
  for (let at = 0; at < bytes.length;) {
    const headEnd = bytes.indexOf("\r\n\r\n", at)
    const length = Number(/content-length: (\d+)/i.exec(bytes.subarray(at, headEnd).toString("latin1"))?.[1])
    bodies.push(bytes.subarray(headEnd + 4, headEnd + 4 + length).toString("utf8"))
    at = headEnd + 4 + length
  }
  return bodies
}

/**
 * `times` GETs of `path` sent at once (pipelined) on a socket of its own, which reads the first
 * bytes and then stops reading until `bodies` is called; the bodies of the answers once they have
 * all come. Whether Node or the kernel holds what is not read depends on the kernel's buffers
 * (here, with loopback's, the kernel): the unit tests below hold the buffers' rule itself.
 */
const stalledGets = (port: number, path: string, key: string, times: number) => {
  const socket = connect(port, "127.0.0.1")
  const chunks: Array<Buffer> = []
  let stalled = true
  const started = new Promise<void>((resolve) => socket.once("data", () => resolve()))
  socket.on("data", (chunk: Buffer) => {
    chunks.push(chunk)
    if (stalled) socket.pause()
  })
  const ended = new Promise<Array<string>>((resolve, reject) => {
    socket.on("error", reject)
    socket.on("end", () => resolve(bodiesOf(Buffer.concat(chunks))))
  })
  const get = (last: boolean) => `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\n${last ? "Connection: close\r\n" : ""}\r\n`
  socket.write(Array.from({ length: times }, (_, i) => get(i === times - 1)).join(""))
  return { started, bodies: () => ((stalled = false), socket.resume(), ended) }
}

for (const rt of runtimes()) {
  describe(`large answers on ${rt.name}`, () => {
    layer(serverOn(rt), { timeout: 180_000 })((it) => {
      it.effect("two chambers' pages in buffers of one size, many at once, while clients stall mid-answer: every answer arrives whole and as it was made", () =>
        Effect.gen(function*() {
          const [a, b] = [yield* chamberOfLongPages("a"), yield* chamberOfLongPages("b")]
          const path = "/api/v1/members?page=1"
          const [expectedA, expectedB] = [(yield* call("GET", path, { key: a })).text, (yield* call("GET", path, { key: b })).text]
          assert.isAbove(expectedA.length, 400_000)
          // Both pages need buffers of one size (a power of two).
          assert.strictEqual(Math.ceil(Math.log2(expectedA.length)), Math.ceil(Math.log2(expectedB.length)))
          const port = Number(new URL(yield* serverUrl).port)

          const stalled = Array.from({ length: 4 }, () => stalledGets(port, path, a, 4))
          yield* Effect.promise(() => Promise.all(stalled.map((s) => s.started)))
          // Meanwhile the other chamber's pages, many at once, in buffers of the same size.
          const others = yield* Effect.forEach(Array.from({ length: 40 }), () => call("GET", path, { key: b }), { concurrency: 20 })
          for (const other of others) assert.isTrue(other.text === expectedB, "another chamber's page arrived changed")
          const bodies = (yield* Effect.promise(() => Promise.all(stalled.map((s) => s.bodies())))).flat()
          assert.strictEqual(bodies.length, 16)
          for (const body of bodies) {
            assert.strictEqual(body.length, expectedA.length)
            assert.isTrue(body === expectedA, "a stalled client's page arrived changed")
          }
        }))
    })
  })
}

describe("the buffers of large answers", () => {
  const answer = (n: number, fill = "x") => fill.repeat(n)
  /** A response that finishes when told to. */
  const pending = () => {
    const emitter = new EventEmitter()
    return { response: { once: (event: "finish", listener: () => void) => emitter.once(event, listener) }, finish: () => emitter.emit("finish") }
  }

  it("an answer's buffer serves no other answer until its response has finished, then serves the next", () => {
    const first = pending()
    const a = bytesFor(answer(100_000, "a"), first.response)
    const b = bytesFor(answer(100_000, "b"), pending().response)
    assert.notStrictEqual(a.buffer, b.buffer)
    assert.strictEqual(Buffer.from(a).toString(), answer(100_000, "a"), "the first answer, untouched by the second")
    first.finish()
    const c = bytesFor(answer(90_000, "c"), pending().response)
    assert.strictEqual(c.buffer, a.buffer, "the finished answer's buffer, used again")
    assert.strictEqual(Buffer.from(c).toString(), answer(90_000, "c"))
  })

  it("the bytes are the text's UTF-8, also for characters of several bytes, and past the largest buffer or without a response they are the answer's own", () => {
    const text = `{"name":"Café Ōsaka 東京 🚀"}`.repeat(2_000)
    const bytes = bytesFor(text, pending().response)
    assert.strictEqual(Buffer.from(bytes).toString("utf8"), text)
    assert.strictEqual(bytes.length, Buffer.byteLength(text))
    const huge = bytesFor(answer(2 * 1024 * 1024), pending().response)
    assert.strictEqual(huge.length, 2 * 1024 * 1024)
    assert.strictEqual(huge.buffer.byteLength, huge.length)
    assert.strictEqual(bytesFor(answer(50_000), undefined).buffer.byteLength, 50_000)
  })
})
