/**
 * Redis outages of a test's own (never the shared server): a `redis-server` on a spare port that
 * the test kills with SIGKILL and starts again on the same port, and a TCP proxy in front of any
 * Redis that passes, swallows (accepts what is sent and answers nothing, as a partitioned network
 * or a proxy whose Redis is gone does), or cuts every connection.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { createConnection, createServer, type Server, type Socket } from "node:net"

export const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer()
    s.listen(0, "127.0.0.1", () => {
      const address = s.address()
      s.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0))
    })
  })

export interface RedisServer {
  readonly port: number
  readonly url: string
  /** SIGKILL: no goodbye to its clients; resolves once it has exited. */
  readonly kill: () => Promise<void>
  /** Starts it again on the same port, empty; resolves once it accepts connections. */
  readonly start: () => Promise<void>
}

const spawnRedis = (port: number) =>
  new Promise<ChildProcess>((resolve, reject) => {
    const child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
    let out = ""
    child.on("error", (error) => reject(new Error(`redis-server could not start (it must be installed for this suite): ${error.message}`)))
    child.stdout!.on("data", (d) => {
      out += d
      if (out.includes("Ready to accept connections")) resolve(child)
    })
    child.on("exit", (code) => reject(new Error(`redis-server exited (${code}): ${out}`)))
  })

const killed = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    child.on("exit", () => resolve())
    child.kill("SIGKILL")
  })

/** A `redis-server` of the test's own on a spare port, keeping nothing on disk; stop it with `kill`. */
export const redisServer = async (): Promise<RedisServer> => {
  const port = await freePort()
  let child = await spawnRedis(port)
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    kill: () => killed(child),
    start: async () => {
      await killed(child)
      child = await spawnRedis(port)
    }
  }
}

export interface RedisProxy {
  readonly port: number
  readonly url: string
  /** Passes bytes both ways (the default). */
  readonly pass: () => void
  /** From now on, accepts whatever is sent and answers nothing, on open and new connections alike. */
  readonly swallow: () => void
  /** Closes every connection (the port stays open). */
  readonly cut: () => void
  /** How many bytes clients sent while swallowed: a command reached the proxy and got no answer. */
  readonly swallowedBytes: () => number
  /** How many connections clients have opened to it so far. */
  readonly connections: () => number
  readonly close: () => Promise<void>
}

/** A proxy on a spare port of 127.0.0.1 to the Redis at `target` (a redis:// URL). */
export const redisProxy = async (target: string): Promise<RedisProxy> => {
  const upstreamUrl = new URL(target)
  const sockets = new Set<Socket>()
  let swallowing = false
  let swallowed = 0
  let connections = 0
  const server: Server = createServer((client) => {
    connections++
    const upstream = createConnection(Number(upstreamUrl.port || 6379), upstreamUrl.hostname)
    for (const s of [client, upstream]) {
      sockets.add(s)
      s.on("close", () => {
        sockets.delete(s)
        client.destroy()
        upstream.destroy()
      })
      s.on("error", () => undefined)
    }
    client.on("data", (d: Buffer) => {
      if (swallowing) swallowed += d.length
      else upstream.write(d)
    })
    upstream.on("data", (d: Buffer) => {
      if (!swallowing) client.write(d)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
  const port = (server.address() as { port: number }).port
  const cut = () => {
    for (const s of sockets) s.destroy()
  }
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    pass: () => void (swallowing = false),
    swallow: () => void (swallowing = true),
    cut,
    swallowedBytes: () => swallowed,
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        cut()
        server.close(() => resolve())
      })
  }
}
