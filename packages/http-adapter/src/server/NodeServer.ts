/**
 * The Node HTTP server the API runs on: `NodeHttpServer.layer` over a Node server with two
 * additions. Node's parser answers some requests before any of our code sees them (an unknown
 * method, headers over 16 KiB, a malformed request line or chunk, Content-Length with
 * Transfer-Encoding, `Expect` other than 100-continue, `CONNECT`, a request past the request
 * timeout); here those answers are JSON `{message}` too, with the right status (docs/api.md
 * "Errors"). An HTTP/1.1 request without Host, which Node would answer with an empty 400, is left
 * to the JSON one of server/JsonErrors.ts. And its `close`, which the layer calls to stop, drains
 * (docs/cli.md "Stopping").
 */
import * as Duration from "effect/Duration"
import * as Layer from "effect/Layer"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as HttpServer from "effect/http/HttpServer"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as http from "node:http"
import * as net from "node:net"
import { performance } from "node:perf_hooks"
import type { Duplex } from "node:stream"
import { ANSWER_FIELDS } from "./AnswerFields.ts"

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

/** The fields every answer carries (server/AnswerFields.ts), as header lines. */
const ANSWER_LINES = Object.entries(ANSWER_FIELDS).map(([name, value]) => `${name}: ${value}\r\n`).join("")

/** A whole HTTP/1.1 response with a JSON `{message}` body; the connection closes after it. */
export const rawJsonResponse = (status: number): string => {
  const body = JSON.stringify({ message: messages[status] ?? messages[400] })
  return `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Type: application/json\r\n${ANSWER_LINES}` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
}

/** How a stop goes (docs/cli.md "Stopping"): how long it waits, and what it tells. */
export interface StopOptions {
  /** How long requests in flight may take to finish once the stop begins; default 30 s. */
  readonly shutdownTimeout?: Duration.Input | undefined
  /** The listener closed: `inFlight` requests are being finished. */
  readonly onStopping?: ((inFlight: number) => void) | undefined
  /** The timeout passed with `cut` requests unfinished: their connections were closed. */
  readonly onCut?: ((cut: number) => void) | undefined
}

/**
 * An HTTP server whose `close`, which the layer's shutdown calls and waits for, drains
 * (docs/cli.md "Stopping"). Node's own `close` loses answers: it closes the listener at once,
 * resetting the connections still in the kernel's accept queue; it destroys every connection its
 * parser deems idle, one whose response has ended but is still being written included; and it
 * leaves busy keep-alive connections serving until their keep-alive timeout. Here the listener
 * stays open, serving the connections that come, until the event loop has waited with nothing to
 * do since the last one came; from the stop on every response says
 * `Connection: close`; once the listener is closed, idle keep-alive connections end, busy ones
 * once their responses are written, and one with no request yet has `FIRST_REQUEST_GRACE` from
 * its opening to send one; at the timeout whatever is left is closed, and its requests counted
 * as cut.
 */
class DrainingServer extends http.Server {
  readonly #connections = new Map<net.Socket, Connection>()
  readonly #options: StopOptions
  #stopping = false

  constructor(options: ServerOptions) {
    const requestTimeout = Math.max(1, Math.round(Duration.toMillis(options.requestTimeout ?? DEFAULT_REQUEST_TIMEOUT)))
    super({
      requireHostHeader: false,
      // Node bounds the headers by the smaller of this and its own 60 s, and looks for requests
      // past their time every `connectionsCheckingInterval` (30 s by default, which would let a
      // slow request run on that much longer): here within a quarter of the timeout, at most 1 s.
      requestTimeout,
      connectionsCheckingInterval: Math.max(1, Math.min(1_000, Math.round(requestTimeout / 4)))
    })
    this.keepAliveTimeout = Math.max(1, Math.round(Duration.toMillis(options.keepAliveTimeout ?? DEFAULT_KEEP_ALIVE_TIMEOUT)))
    this.#options = options
    this.on("clientError", (error: NodeJS.ErrnoException, socket: Duplex) => {
      if (socket.writable && this.#answerable(socket)) socket.end(rawJsonResponse(statusOf(error)))
      else socket.destroy()
    })
    this.on("connection", (socket: net.Socket) => {
      this.#connections.set(socket, { responses: new Set(), served: false, since: Date.now() })
      socket.once("close", () => this.#connections.delete(socket))
    })
    const track = (request: http.IncomingMessage, response: http.ServerResponse) => {
      const socket = request.socket
      const connection = this.#connections.get(socket)
      if (connection === undefined) return
      connection.served = true
      connection.last = response
      connection.responses.add(response)
      if (this.#stopping) response.shouldKeepAlive = false
      response.once("close", () => {
        connection.responses.delete(response)
        forgetOnceComplete(connection, response)
        // A response begun before the stop promised keep-alive: its connection ends once it is written.
        if (this.#stopping && connection.responses.size === 0) socket.destroySoon()
      })
    }
    // Before the layer's listeners, so a response is counted before any of it is written.
    this.prependListener("request", track)
    this.prependListener("checkContinue", track)
  }

  override close(callback?: (error?: Error) => void): this {
    if (this.#stopping) return this
    this.#stopping = true
    const timeout = Duration.toMillis(this.#options.shutdownTimeout ?? DEFAULT_SHUTDOWN_TIMEOUT)
    const deadline = Date.now() + timeout
    for (const { responses } of this.#connections.values()) {
      for (const response of responses) if (!response.headersSent) response.shouldKeepAlive = false
    }
    // The listener closes once the event loop has waited with nothing to do since the last
    // connection came: then none the kernel had queued for it is left to be reset. Or once it has
    // taken as many as that queue holds (any more came after the stop), or at the deadline.
    let idleBefore = idleTime()
    let taken = 0
    const stillComing = () => {
      idleBefore = idleTime()
      taken++
    }
    const check = setInterval(() => {
      if (idleTime() === idleBefore && taken < LISTEN_BACKLOG && Date.now() < deadline) return
      clearInterval(check)
      this.off("connection", stillComing)
      // Node's own `close` would also destroy the connections its parser deems idle.
      net.Server.prototype.close.call(this, callback)
      this.#drain(deadline)
    }, ACCEPT_CHECK)
    this.on("connection", stillComing)
    return this
  }

  /**
   * Whether an answer of Node's own (a parser error, a request past its time) can be written on
   * `socket`: no response is being written there, and the request being received has no answer
   * begun (an interim `100 Continue` is none). Otherwise the connection just ends. A response
   * that ended before its request did (a 401 sent before the body came) was that request's answer.
   */
  #answerable(socket: Duplex): boolean {
    const connection = this.#connections.get(socket as net.Socket)
    if (connection === undefined) return false
    for (const response of connection.responses) if (response.headersSent) return false
    const last = connection.last
    return last === undefined || !last.headersSent || last.req.complete
  }

  /** Once the listener is closed: ends idle connections, lets busy ones finish, cuts what is left at the deadline. */
  #drain(deadline: number) {
    let inFlight = 0
    for (const [socket, { responses, served, since }] of this.#connections) {
      inFlight += responses.size
      if (responses.size > 0) continue
      if (served) socket.destroySoon()
      else setTimeout(() => this.#connections.get(socket)?.served === false && socket.destroy(), since + FIRST_REQUEST_GRACE - Date.now()).unref()
    }
    this.#options.onStopping?.(inFlight)
    if (!Number.isFinite(deadline)) return
    const cut = setTimeout(() => {
      let unfinished = 0
      for (const [socket, { responses }] of this.#connections) {
        unfinished += responses.size
        socket.destroy()
      }
      if (unfinished > 0) this.#options.onCut?.(unfinished)
    }, Math.min(Math.max(0, deadline - Date.now()), 2 ** 31 - 1))
    this.once("close", () => clearTimeout(cut))
  }
}

interface Connection {
  /** Responses not yet written. */
  readonly responses: Set<http.ServerResponse>
  /** The response to the latest request on it, written or not. */
  last?: http.ServerResponse
  /** Whether a request has come on it. */
  served: boolean
  /** When it was accepted. */
  readonly since: number
}

/**
 * A written response stays the connection's `last` only while its request is still being
 * received: that is all `#answerable` asks of it. Held until the next request on a keep-alive
 * connection, it would keep its answer and the fiber that made it alive for nothing.
 */
const forgetOnceComplete = (connection: Connection, response: http.ServerResponse) => {
  const forget = () => {
    if (connection.last === response) delete connection.last
  }
  if (response.req.complete) forget()
  else response.req.once("end", forget)
}

/**
 * The event loop's time spent waiting for work, in ms: it does not grow while a connection waits
 * in the kernel's queue, as Node takes that connection rather than wait.
 */
const idleTime = () => performance.eventLoopUtilization().idle
/** How often a stop looks whether the event loop has waited since the last connection. */
const ACCEPT_CHECK = 10
/** The listen backlog (Node's default): how many connections the kernel queues for the listener. */
const LISTEN_BACKLOG = 511
/** How long after being accepted a connection may take to send its first request, stop or not. */
const FIRST_REQUEST_GRACE = 5_000
const DEFAULT_SHUTDOWN_TIMEOUT = Duration.seconds(30)
const DEFAULT_REQUEST_TIMEOUT = Duration.seconds(30)
/**
 * Longer than the idle timeout of the load balancers a deployment puts in front (60 s for most):
 * a balancer that reuses a connection the server is closing that moment gets no answer to the
 * request it sent (Node's own 5 s made that a matter of time behind any of them).
 */
const DEFAULT_KEEP_ALIVE_TIMEOUT = Duration.seconds(65)

/** How the server serves: how long a request may take to arrive, and how it stops. */
export interface ServerOptions extends StopOptions {
  /**
   * How long a request may take to arrive whole, headers and body (CHAMBER_REQUEST_TIMEOUT);
   * default 30 s. Past it the request is answered 408 and its connection closes.
   */
  readonly requestTimeout?: Duration.Input | undefined
  /**
   * How long a connection may sit idle between requests before the server closes it
   * (CHAMBER_KEEP_ALIVE_TIMEOUT); default 65 s. Responses announce it (`Keep-Alive: timeout=N`);
   * Node 24 closes a second later still, for clients that heed the announcement late.
   */
  readonly keepAliveTimeout?: Duration.Input | undefined
}

/** A Node HTTP server with every answer of Node's own in JSON, and a draining `close`. */
export const createServer = (options: ServerOptions = {}): http.Server => {
  const server = new DrainingServer(options)
  // No route serves CONNECT: without a listener, Node would close the connection with no answer.
  server.on("connect", (_request: http.IncomingMessage, socket: Duplex) => {
    socket.on("error", () => {})
    socket.end(rawJsonResponse(405))
  })
  server.on("checkExpectation", (_request: http.IncomingMessage, response: http.ServerResponse) => {
    const body = JSON.stringify({ message: messages[417] })
    response.writeHead(417, {
      ...ANSWER_FIELDS,
      "content-type": "application/json",
      "content-length": Buffer.byteLength(body),
      connection: "close"
    })
    response.end(body)
  })
  return server
}

/**
 * The API's listener on Node: `NodeHttpServer.layer` over `createServer`, on the given port and
 * host. The layer's stop waits for `close` to drain; its own timeout is a backstop only: the
 * server's (`shutdownTimeout`) passes first, and it must, as the layer interrupts the requests
 * still running when its own passes.
 */
export const NodeServerLive = (options: ServerOptions & { readonly port: number; readonly host?: string | undefined }) =>
  NodeHttpServer.layer(() => createServer(options), {
    port: options.port,
    host: options.host,
    backlog: LISTEN_BACKLOG,
    gracefulShutdownTimeout: Duration.sum(Duration.fromInputUnsafe(options.shutdownTimeout ?? DEFAULT_SHUTDOWN_TIMEOUT), Duration.seconds(5))
  })

/** For tests: the listener with `options` on a free port of 127.0.0.1, with an HttpClient pointed at it. */
export const nodeServerTest = (options: ServerOptions = {}) =>
  HttpServer.layerTestClient.pipe(
    Layer.provide(
      Layer.fresh(FetchHttpClient.layer).pipe(Layer.provide(Layer.succeed(FetchHttpClient.RequestInit)({ keepalive: false })))
    ),
    Layer.provideMerge(NodeServerLive({ ...options, port: 0, host: "127.0.0.1" }))
  )

/** For tests: the listener on a free port of 127.0.0.1, with an HttpClient pointed at it. */
export const NodeServerTest = nodeServerTest()
