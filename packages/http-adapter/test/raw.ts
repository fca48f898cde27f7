/**
 * A raw HTTP/1.1 exchange over a TCP socket: the request goes out byte for byte as given (odd
 * methods, paths, headers and bodies that no client library would send), and the whole answer
 * is read back, the server closing the connection after it.
 */
import * as Effect from "effect/Effect"
import * as net from "node:net"

export interface RawReply {
  readonly status: number
  readonly headers: Record<string, string>
  readonly body: string
}

const decodeChunked = (data: Buffer): Buffer => {
  const parts: Array<Buffer> = []
  let at = 0
  for (;;) {
    const end = data.indexOf("\r\n", at)
    if (end === -1) break
    const size = parseInt(data.subarray(at, end).toString("latin1"), 16)
    if (!Number.isFinite(size) || size === 0) break
    parts.push(data.subarray(end + 2, end + 2 + size))
    at = end + 2 + size + 2
  }
  return Buffer.concat(parts)
}

/** The first answer in `data` (after any interim one). */
export const parse = (data: Buffer): RawReply => {
  // An interim answer (`100 Continue`) comes before the final one.
  while (/^HTTP\/1\.1 1\d\d /.test(data.subarray(0, 13).toString("latin1"))) {
    const end = data.indexOf("\r\n\r\n")
    if (end === -1) break
    data = data.subarray(end + 4)
  }
  const split = data.indexOf("\r\n\r\n")
  if (split === -1) return { status: 0, headers: {}, body: data.toString("utf8") }
  const [statusLine = "", ...lines] = data.subarray(0, split).toString("latin1").split("\r\n")
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const colon = line.indexOf(":")
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
  }
  const rest = data.subarray(split + 4)
  const body = headers["transfer-encoding"]?.includes("chunked") ? decodeChunked(rest) : rest
  return { status: Number(statusLine.split(" ")[1] ?? 0), headers, body: body.toString("utf8") }
}

/** Sends `request` (its own `Connection: close` included) and reads until the server closes. */
export const rawExchange = (port: number, request: Buffer | string, timeoutMs = 15_000) =>
  Effect.callback<RawReply>((resume) => {
    const chunks: Array<Buffer> = []
    const socket = net.createConnection({ port, host: "127.0.0.1" })
    const done = () => resume(Effect.succeed(parse(Buffer.concat(chunks))))
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error(`no answer within ${timeoutMs} ms`)))
    socket.on("data", (chunk) => chunks.push(chunk))
    socket.on("end", done)
    socket.on("error", (error) =>
      chunks.length > 0 ? done() : resume(Effect.die(new Error(`${error.message} for ${String(request).slice(0, 120)}`))))
    socket.on("connect", () => socket.write(request))
    return Effect.sync(() => socket.destroy())
  })

/**
 * A slow client: sends `head` at once, then `trickle` one byte every `everyMs`, and reads until
 * the server closes the connection. Every byte the server sent, and how long after the first
 * write it closed.
 */
export const rawTrickle = (port: number, head: string, trickle: string, everyMs: number, timeoutMs = 15_000) =>
  Effect.callback<{ readonly received: Buffer; readonly closedAfterMs: number }>((resume) => {
    const chunks: Array<Buffer> = []
    const socket = net.createConnection({ port, host: "127.0.0.1" })
    let started = 0
    let sent = 0
    let timer: ReturnType<typeof setInterval> | undefined
    const done = () => {
      clearInterval(timer)
      clearTimeout(deadline)
      resume(Effect.succeed({ received: Buffer.concat(chunks), closedAfterMs: performance.now() - started }))
    }
    const deadline = setTimeout(() => socket.destroy(), timeoutMs)
    socket.on("data", (chunk) => chunks.push(chunk))
    // Writing on after the server closed may fail (EPIPE, ECONNRESET); what it sent is what counts.
    socket.on("error", () => {})
    socket.on("close", done)
    socket.on("connect", () => {
      started = performance.now()
      socket.write(head)
      timer = setInterval(() => sent < trickle.length && socket.write(trickle[sent++]!), everyMs)
    })
    return Effect.sync(() => {
      clearInterval(timer)
      clearTimeout(deadline)
      socket.destroy()
    })
  })

/** A request with `Connection: close`, Host and a Content-Length for `body` unless `headers` say otherwise. */
export const rawRequest = (options: {
  readonly method: string
  readonly path: string | Buffer
  readonly headers?: ReadonlyArray<readonly [string, string]>
  readonly body?: string | Buffer
}): Buffer => {
  const body = options.body === undefined ? Buffer.alloc(0) : Buffer.from(options.body)
  const headers = [...(options.headers ?? [])]
  const has = (name: string) => headers.some(([k]) => k.toLowerCase() === name)
  if (!has("host")) headers.push(["Host", "127.0.0.1"])
  if (!has("connection")) headers.push(["Connection", "close"])
  if (options.body !== undefined && !has("content-length") && !has("transfer-encoding")) {
    headers.push(["Content-Length", String(body.length)])
  }
  return Buffer.concat([
    Buffer.from(`${options.method} `, "latin1"),
    Buffer.isBuffer(options.path) ? options.path : Buffer.from(options.path, "latin1"),
    Buffer.from(` HTTP/1.1\r\n${headers.map(([k, v]) => `${k}: ${v}\r\n`).join("")}\r\n`, "latin1"),
    body
  ])
}
