/**
 * A real HTTPS webhook receiver for tests (packages/webhook-relay/README.md "Testing against a
 * receiver"): it listens on 127.0.0.1, port 0, with a self-signed certificate made at test time
 * in pure JS (the `selfsigned` package, no openssl binary), records every request (method, path,
 * headers and the exact raw body bytes) and answers as scripted, one reply per request in order:
 * a status (500, 500, 500, 200), a hang, a redirect, a 429 with Retry-After, a connection reset.
 * When the script runs out it answers the default reply (200 "ok" unless set).
 *
 * Deliveries must be sent with `allowPrivate: true` (the receiver is on loopback) and `ca:
 * receiver.ca` (its certificate is trusted by nothing else).
 *
 *   const receiver = await startReceiver()
 *   receiver.script(500, { status: 429, retryAfter: "5" }, { hang: true }, { redirect: "/elsewhere" })
 *   ... deliver to receiver.url ...
 *   const [first] = await receiver.waitFor(1)
 *   await receiver.close()
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http"
import { createServer, type Server } from "node:https"
import type { AddressInfo, Socket } from "node:net"
import { generate } from "selfsigned"

/** One request as the receiver got it. */
export interface ReceivedRequest {
  readonly method: string
  /** Path and query, as sent. */
  readonly path: string
  /** Header names in lower case; repeated headers as Node joins them. */
  readonly headers: IncomingHttpHeaders
  /** The raw body, byte for byte. */
  readonly body: Buffer
  readonly receivedAt: Date
  /** Which connection it came on: 1 for the receiver's first, and so on (kept-alive connections carry several). */
  readonly connection: number
}

/** How the receiver answers one request. A bare number is `{ status: n }`. */
export type Reply =
  | number
  | {
    readonly status: number
    /** The response body (default: the status code and its reason, e.g. "500 Internal Server Error"). */
    readonly body?: string | Buffer
    readonly headers?: Readonly<Record<string, string>>
    /** The `Retry-After` header to send (seconds or an HTTP date, or anything, to test garbage). */
    readonly retryAfter?: string
    /** Wait this long before answering. */
    readonly delayMs?: number
  }
  /** Never answer; the connection stays open until the sender gives up or the receiver closes. */
  | { readonly hang: true }
  /** Answer a redirect (301 unless `status` says otherwise) to `redirect`, a path on this receiver or a URL. */
  | { readonly redirect: string; readonly status?: 301 | 302 | 303 | 307 | 308 }
  /** Destroy the connection without answering. */
  | { readonly reset: true }

export interface Receiver {
  /** `https://127.0.0.1:<port>`, no trailing slash; deliver to it or to any path under it. */
  readonly url: string
  readonly port: number
  /** The receiver's certificate (PEM), to be trusted through the sender's `ca` or NODE_EXTRA_CA_CERTS. */
  readonly ca: string
  /** Every request received so far, in order of arrival. */
  readonly requests: ReadonlyArray<ReceivedRequest>
  /** Connections open right now. */
  readonly openConnections: () => number
  /** Queue replies for the next requests, in order (added after any still queued). */
  script(...replies: ReadonlyArray<Reply>): void
  /** The reply once the script runs out. */
  setDefault(reply: Reply): void
  /** Forget the requests and the script (the default reply stays). */
  reset(): void
  /** Resolves with the requests once at least `count` have arrived; rejects after `timeoutMs` (default 10 s). */
  waitFor(count: number, timeoutMs?: number): Promise<ReadonlyArray<ReceivedRequest>>
  /** Stops listening and drops every connection, hanging ones included. */
  close(): Promise<void>
}

export interface ReceiverOptions {
  /** The reply once the script runs out (default 200 "ok"). */
  readonly defaultReply?: Reply
}

let certificate: Promise<{ readonly key: string; readonly cert: string }> | undefined

/** One self-signed certificate per test process, for localhost, 127.0.0.1 and ::1 (EC P-256, SHA-256). */
export const testCertificate = (): Promise<{ readonly key: string; readonly cert: string }> =>
  (certificate ??= generate([{ name: "commonName", value: "localhost" }], {
    keyType: "ec",
    curve: "P-256",
    algorithm: "sha256",
    notBeforeDate: new Date(Date.now() - 24 * 3600 * 1000),
    extensions: [
      { name: "basicConstraints", cA: false },
      { name: "keyUsage", digitalSignature: true, keyEncipherment: true },
      { name: "extKeyUsage", serverAuth: true },
      { name: "subjectAltName", altNames: [{ type: 2, value: "localhost" }, { type: 7, ip: "127.0.0.1" }, { type: 7, ip: "::1" }] }
    ]
  }).then(({ cert, private: key }) => ({ cert, key })))

const REASONS: Readonly<Record<number, string>> = {
  200: "OK", 201: "Created", 202: "Accepted", 204: "No Content", 301: "Moved Permanently", 302: "Found",
  400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 410: "Gone", 429: "Too Many Requests",
  500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable"
}

export const startReceiver = async (options: ReceiverOptions = {}): Promise<Receiver> => {
  const { key, cert } = await testCertificate()
  const requests: Array<ReceivedRequest> = []
  const queue: Array<Reply> = []
  let fallback: Reply = options.defaultReply ?? { status: 200, body: "ok" }
  const waiters = new Set<() => void>()
  const sockets = new Set<Socket>()
  const connectionIds = new WeakMap<Socket, number>()
  let connections = 0

  const answer = (reply: Reply, req: IncomingMessage, res: ServerResponse) => {
    const r = typeof reply === "number" ? { status: reply } : reply
    if ("hang" in r) return
    if ("reset" in r) return req.socket.destroy()
    if ("redirect" in r) {
      res.writeHead(r.status ?? 301, { location: r.redirect, "content-type": "text/plain" })
      return res.end(`moved to ${r.redirect}`)
    }
    const send = () => {
      const headers: Record<string, string> = { "content-type": "text/plain; charset=utf-8", ...r.headers }
      if (r.retryAfter !== undefined) headers["retry-after"] = r.retryAfter
      res.writeHead(r.status, headers)
      res.end(r.body ?? `${r.status} ${REASONS[r.status] ?? ""}`.trim())
    }
    if (r.delayMs === undefined) send()
    else setTimeout(send, r.delayMs)
  }

  const server: Server = createServer({ key, cert }, (req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      requests.push({
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks),
        receivedAt: new Date(),
        connection: connectionIds.get(req.socket) ?? 0
      })
      for (const wake of [...waiters]) wake()
      answer(queue.shift() ?? fallback, req, res)
    })
  })
  // "secureConnection" gives the TLS socket that requests arrive on; "connection" the TCP one, which is what close() must drop.
  server.on("secureConnection", (socket: Socket) => connectionIds.set(socket, ++connections))
  server.on("connection", (socket: Socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  // A TLS handshake the client aborts (an untrusted certificate) is not the receiver's failure.
  server.on("tlsClientError", () => {})
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => resolve())
  })
  const port = (server.address() as AddressInfo).port

  return {
    url: `https://127.0.0.1:${port}`,
    port,
    ca: cert,
    requests,
    openConnections: () => sockets.size,
    script: (...replies) => void queue.push(...replies),
    setDefault: (reply) => void (fallback = reply),
    reset: () => {
      requests.length = 0
      queue.length = 0
    },
    waitFor: (count, timeoutMs = 10_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (requests.length < count) return
          clearTimeout(timer)
          waiters.delete(check)
          resolve([...requests])
        }
        const timer = setTimeout(() => {
          waiters.delete(check)
          reject(new Error(`The receiver got ${requests.length} of the ${count} requests awaited within ${timeoutMs} ms.`))
        }, timeoutMs)
        waiters.add(check)
        check()
      }),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        for (const socket of sockets) socket.destroy()
      })
  }
}
