/**
 * A TCP proxy to the database for tests that cut the connection (never the shared server
 * itself): `close` drops every connection and closes the port, `open` listens again on the same
 * port, so clients reconnect where they were.
 */
import { createConnection, createServer, type Server, type Socket } from "node:net"

export interface TcpProxy {
  readonly port: number
  readonly open: () => Promise<void>
  readonly close: () => Promise<void>
}

/** A proxy to `target`'s host and port (5432 when it names none), listening on 127.0.0.1. */
export const tcpProxy = async (target: URL): Promise<TcpProxy> => {
  const sockets = new Set<Socket>()
  let server: Server | undefined
  let port = 0
  const open = () =>
    new Promise<void>((resolve) => {
      server = createServer((client) => {
        const upstream = createConnection(Number(target.port || 5432), target.hostname)
        for (const s of [client, upstream]) {
          sockets.add(s)
          s.on("close", () => sockets.delete(s))
          s.on("error", () => undefined)
        }
        client.pipe(upstream).pipe(client)
      })
      server.listen(port, "127.0.0.1", () => {
        port = (server!.address() as { port: number }).port
        resolve()
      })
    })
  const close = () =>
    new Promise<void>((resolve) => {
      if (server === undefined) return resolve()
      server.close(() => resolve())
      server = undefined
      for (const s of sockets) s.destroy()
    })
  await open()
  return { get port() { return port }, open, close }
}

/** `url` with its port replaced by the proxy's. */
export const throughProxy = (url: string, proxy: TcpProxy): string => {
  const u = new URL(url)
  u.port = String(proxy.port)
  return u.toString()
}
