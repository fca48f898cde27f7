/**
 * A TCP proxy of the test's own between the code and the PostgreSQL server, to take the database
 * away the ways it goes away: connections refused (nothing listens), connections accepted and
 * never answered (a connect timeout), a restart as PostgreSQL makes one (open connections ended
 * with FATAL 57P01, new ones told 57P03 "starting up"), and a connection dropped at a chosen
 * message: before the server gets it, or when the server answers it (before or after the client
 * gets the answer).
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as net from "node:net"

/** What the proxy does with new connections. */
export type ProxyMode = "pass" | "refuse" | "silent" | "restarting"

/** Where a connection is cut: when the client sends text containing `sent`, or the server answers text containing `answered`. */
export interface CutAt {
  /** Cut before the server gets the client's chunk containing it. */
  readonly sent?: string | undefined
  /** Cut when the server's chunk containing it arrives: after the client got it (`delivered`), or before (the client never learns the outcome). */
  readonly answered?: string | undefined
  readonly delivered?: boolean | undefined
  /** With `delivered`: the server's goodbye follows the answer, as PostgreSQL's on a fast shutdown (FATAL 57P01). */
  readonly farewell?: boolean | undefined
}

export interface ProxyService {
  readonly port: number
  /** `url` with its host and port replaced by the proxy's. */
  readonly through: (url: string) => string
  /**
   * `pass` forwards; `refuse` stops listening (connection refused); `silent` accepts and never
   * answers; `restarting` answers a new connection's startup with FATAL 57P03. Open connections are
   * dropped unless `pass`; `restarting` first sends them FATAL 57P01.
   */
  readonly set: (mode: ProxyMode) => Effect.Effect<void>
  /** Cuts the first connection that meets `at` (once); `cuts()` says whether it happened (0 or 1). */
  readonly cutAt: (at: CutAt | undefined) => void
  readonly cuts: () => number
}

/** A FATAL ErrorResponse as a backend sends it. */
const fatal = (code: string, message: string) => {
  const body = Buffer.from(`SFATAL\0VFATAL\0C${code}\0M${message}\0\0`, "utf8")
  const out = Buffer.alloc(5 + body.length)
  out[0] = 0x45
  out.writeInt32BE(4 + body.length, 1)
  body.copy(out, 5)
  return out
}

/** What a backend sends when a fast shutdown ends its connection. */
const ADMIN_SHUTDOWN = fatal("57P01", "terminating connection due to administrator command")
/** What a server that is starting answers a new connection. */
const STARTING_UP = fatal("57P03", "the database system is starting up")
const SSL_REQUEST = 80877103

export class FaultProxy extends Context.Service<FaultProxy, ProxyService>()("test/FaultProxy") {}

interface Pair {
  readonly client: net.Socket
  server: net.Socket | undefined
}

const listen = (server: net.Server, port: number) =>
  new Promise<number>((resolve, reject) => {
    server.once("error", reject)
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject)
      resolve((server.address() as net.AddressInfo).port)
    })
  })

/** A proxy on a free local port to `target` (a `postgres://` URL), closed with the scope. */
export const faultProxy = (target: string) =>
  Layer.effect(FaultProxy, Effect.acquireRelease(
    Effect.promise(async () => {
      const { hostname, port: targetPort } = new URL(target)
      const pairs = new Set<Pair>()
      let mode: ProxyMode = "pass"
      let cut: CutAt | undefined
      let cuts = 0
      const drop = (pair: Pair) => {
        pairs.delete(pair)
        pair.client.destroy()
        pair.server?.destroy()
      }
      /** Cuts `pair` once `chunk` (if any) reached the client. */
      const takeCut = (pair: Pair, chunk?: Buffer) => {
        cut = undefined
        cuts++
        if (chunk === undefined) drop(pair)
        else pair.client.write(chunk, () => drop(pair))
      }
      const onConnection = (client: net.Socket) => {
        const pair: Pair = { client, server: undefined }
        pairs.add(pair)
        client.on("error", () => drop(pair))
        client.on("close", () => drop(pair))
        if (mode === "silent") return
        if (mode === "restarting") {
          // An SSLRequest is declined, as PostgreSQL does without TLS; the startup packet after it is refused.
          client.on("data", (chunk: Buffer) => {
            if (chunk.length === 8 && chunk.readInt32BE(4) === SSL_REQUEST) client.write("N")
            else client.end(STARTING_UP)
          })
          return
        }
        const server = net.connect(Number(targetPort || 5432), hostname)
        pair.server = server
        server.on("error", () => drop(pair))
        server.on("close", () => drop(pair))
        client.on("data", (chunk: Buffer) => {
          if (cut?.sent !== undefined && chunk.includes(cut.sent)) return takeCut(pair)
          server.write(chunk)
        })
        server.on("data", (chunk: Buffer) => {
          if (cut?.answered === undefined || !chunk.includes(cut.answered)) return void client.write(chunk)
          takeCut(pair, cut.delivered !== true ? undefined : cut.farewell === true ? Buffer.concat([chunk, ADMIN_SHUTDOWN]) : chunk)
        })
      }
      let listener = net.createServer(onConnection)
      const port = await listen(listener, 0)
      const service: ProxyService = {
        port,
        through: (url) => {
          const u = new URL(url)
          u.hostname = "127.0.0.1"
          u.port = String(port)
          return u.toString()
        },
        set: (next) =>
          Effect.promise(async () => {
            if (next === "restarting") for (const pair of [...pairs]) pair.client.write(ADMIN_SHUTDOWN)
            if (next !== "pass") for (const pair of [...pairs]) drop(pair)
            if (next === "refuse" && mode !== "refuse") {
              await new Promise<void>((resolve) => listener.close(() => resolve()))
            } else if (next !== "refuse" && mode === "refuse") {
              listener = net.createServer(onConnection)
              await listen(listener, port)
            }
            mode = next
          }),
        cutAt: (at) => {
          cut = at
          cuts = 0
        },
        cuts: () => cuts
      }
      return { service, close: () => {
        for (const pair of [...pairs]) drop(pair)
        return new Promise<void>((resolve) => (listener.listening ? listener.close(() => resolve()) : resolve()))
      } }
    }),
    ({ close }) => Effect.promise(close)
  ).pipe(Effect.map(({ service }) => service)))
