/**
 * How the server writes an answer (server/NodeServer.ts `OneWriteResponse`): a JSON answer goes
 * out in one write, its head and body together, while a body that does not match its declared
 * Content-Length still fails Node's strict check.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { runtimes } from "@chamber/pg-adapter/testing"
import * as http from "node:http"
import type * as net from "node:net"
import { createServer } from "../src/index.ts"
import { chamberWithKey, serverListeningOn, serverUrl } from "./fixture.ts"
import { rawExchange, rawRequest } from "./raw.ts"

/** The writes each accepted connection made to its socket: one entry per write, with its chunks. */
const writes: Array<Array<number>> = []

/** Counts a socket's writes: Node calls `_write` for one chunk, `_writev` for several. */
const countWrites = (socket: net.Socket) => {
  const own = writes[writes.push([]) - 1]!
  const socketWrites = socket as net.Socket & {
    _write: (chunk: Buffer | string, encoding: BufferEncoding, callback: () => void) => void
    _writev: (chunks: Array<{ chunk: Buffer | string }>, callback: () => void) => void
  }
  const write = socketWrites._write
  const writev = socketWrites._writev
  socketWrites._write = function(chunk, encoding, callback) {
    own.push(1)
    return write.call(this, chunk, encoding, callback)
  }
  socketWrites._writev = function(chunks, callback) {
    own.push(chunks.length)
    return writev.call(this, chunks, callback)
  }
}

const counted = () => {
  const server = createServer()
  server.on("connection", countWrites)
  return server
}

/** Sends one request on a fresh connection and returns its answer and the writes its connection made. */
const exchange = (method: string, path: string, key?: string) =>
  Effect.gen(function*() {
    const port = Number(new URL(yield* serverUrl).port)
    const before = writes.length
    const reply = yield* rawExchange(
      port,
      rawRequest({ method, path, headers: key === undefined ? [] : [["Authorization", `Bearer ${key}`]] })
    )
    return { reply, writes: writes.slice(before).flat() }
  })

for (const rt of runtimes()) {
  describe(`one write an answer on ${rt.name}`, () => {
    layer(serverListeningOn(NodeHttpServer.layer(counted, { port: 0, host: "127.0.0.1" }), rt), { timeout: 120_000 })((it) => {
      it.effect("a JSON answer (a success, an error, a page) is one write of one chunk, head and body together", () =>
        Effect.gen(function*() {
          const { key } = yield* chamberWithKey("members:read")
          for (const [path, status] of [["/api/v1/me", 200], ["/api/v1/members/999999", 404], ["/api/v1/members?page=1", 200]] as const) {
            const { reply, writes } = yield* exchange("GET", path, key)
            assert.strictEqual(reply.status, status, path)
            assert.strictEqual(reply.headers["content-length"], String(Buffer.byteLength(reply.body)), path)
            assert.deepStrictEqual(writes, [1], `${path}: the writes and their chunks`)
          }
          const unauthenticated = yield* exchange("GET", "/api/v1/me")
          assert.strictEqual(unauthenticated.reply.status, 401)
          assert.deepStrictEqual(unauthenticated.writes, [1], "a 401: the writes and their chunks")
        }))
    })
  })
}

describe("a body that does not match its Content-Length", () => {
  it.effect("still fails Node's strict check, before anything is sent", () =>
    Effect.gen(function*() {
      const thrown = yield* Effect.callback<unknown>((resume) => {
        const server = createServer()
        server.on("request", (_request: http.IncomingMessage, response: http.ServerResponse) => {
          response.strictContentLength = true
          response.writeHead(200, { "content-type": "application/json", "content-length": "10" })
          try {
            response.end("{}")
            resume(Effect.succeed(undefined))
          } catch (error) {
            resume(Effect.succeed(error))
          }
          response.destroy()
        })
        server.listen(0, "127.0.0.1", () => {
          const { port } = server.address() as net.AddressInfo
          http.get({ port, host: "127.0.0.1", path: "/" }).on("error", () => {})
        })
        return Effect.sync(() => server.close())
      })
      assert.strictEqual((thrown as { code?: string } | undefined)?.code, "ERR_HTTP_CONTENT_LENGTH_MISMATCH")
    }))
})
