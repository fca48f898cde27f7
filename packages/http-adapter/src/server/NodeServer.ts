/**
 * The Node HTTP server the API runs on. Node's own parser answers some requests before any of
 * our code sees them (an unknown method, headers over 16 KiB, a malformed request line or chunk,
 * Content-Length with Transfer-Encoding, `Expect` other than 100-continue); here those answers
 * are JSON `{message}` too, with the right status (docs/api.md "Errors").
 */
import { Layer } from "effect"
import { FetchHttpClient, HttpServer } from "effect/http"
import { NodeHttpServer } from "@effect/platform-node"
import * as http from "node:http"
import type { Duplex } from "node:stream"

const reasons: Record<number, string> = {
  400: "Bad Request",
  404: "Not Found",
  405: "Method Not Allowed",
  408: "Request Timeout",
  414: "URI Too Long",
  417: "Expectation Failed",
  431: "Request Header Fields Too Large"
}

const messages: Record<number, string> = {
  400: "Bad request.",
  405: "Method not allowed.",
  408: "The request took too long to arrive.",
  417: "Only `Expect: 100-continue` is supported.",
  431: "The request's headers are larger than 16 KiB."
}

/** The status a parser error deserves. */
const statusOf = (error: NodeJS.ErrnoException): number => {
  switch (error.code) {
    case "HPE_HEADER_OVERFLOW":
      return 431
    case "HPE_INVALID_METHOD":
      return 405
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return 408
    default:
      return 400
  }
}

/** A whole HTTP/1.1 response with a JSON `{message}` body; the connection closes after it. */
export const rawJsonResponse = (status: number): string => {
  const body = JSON.stringify({ message: messages[status] ?? "Bad request." })
  return `HTTP/1.1 ${status} ${reasons[status] ?? "Bad Request"}\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
}

const onClientError = (error: NodeJS.ErrnoException, socket: Duplex) => {
  // Nothing can be written once a response has begun: then the connection just ends.
  if (socket.writable && (socket as Duplex & { bytesWritten?: number }).bytesWritten === 0) {
    socket.end(rawJsonResponse(statusOf(error)))
  } else {
    socket.destroy()
  }
}

/** `http.createServer` with every answer of Node's own in JSON. */
export const createServer = (): http.Server => {
  const server = http.createServer()
  server.on("clientError", onClientError)
  server.on("checkExpectation", (_request: http.IncomingMessage, response: http.ServerResponse) => {
    const body = JSON.stringify({ message: messages[417] })
    response.writeHead(417, { "content-type": "application/json", "content-length": Buffer.byteLength(body), connection: "close" })
    response.end(body)
  })
  return server
}

/** The API's listener on Node: `createServer` with the given port and host. */
export const NodeServerLive = (options: { readonly port: number; readonly host?: string | undefined }) =>
  NodeHttpServer.layer(createServer, options)

/** For tests: the listener on a free port of 127.0.0.1, with an HttpClient pointed at it. */
export const NodeServerTest = HttpServer.layerTestClient.pipe(
  Layer.provide(
    Layer.fresh(FetchHttpClient.layer).pipe(Layer.provide(Layer.succeed(FetchHttpClient.RequestInit)({ keepalive: false })))
  ),
  Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
)
