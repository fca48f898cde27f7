/**
 * A PostgreSQL wire proxy that records which statements its clients execute, so the bench can
 * check that the baseline runs the same statements as ours, in the same transactions.
 *
 * It reads the frontend messages only (client to server) and passes every byte through
 * unchanged: `Parse` (a statement's text, named or not), `Bind` (which statement runs) and
 * `Query` (the simple protocol). Each execution is recorded with its connection, so statements
 * between a BEGIN and its COMMIT on one connection can be grouped into their transaction.
 * Used for a handful of requests before the measurement, never under load.
 */
import { createServer, type Server, type Socket, connect } from "node:net"

export interface Executed {
  /** Which proxied connection (a server's pool has several). */
  readonly connection: number
  /** The statement's text, white space collapsed. */
  readonly text: string
  /** How many parameters the Bind carried (0 for a simple query). */
  readonly params: number
}

const normalize = (sql: string) => sql.replace(/\s+/g, " ").trim()

const cstring = (buf: Buffer, at: number): [string, number] => {
  const end = buf.indexOf(0, at)
  return [buf.toString("utf8", at, end), end + 1]
}

export interface Tracer {
  /** A DATABASE_URL that goes through the proxy. */
  readonly url: string
  /** The statements executed since the last call, in order. */
  readonly take: () => Array<Executed>
  readonly close: () => Promise<void>
}

export const startTracer = (target: string): Promise<Tracer> => {
  const upstream = new URL(target)
  let executed: Array<Executed> = []
  let connections = 0
  const sockets = new Set<Socket>()

  const server: Server = createServer((client) => {
    const id = ++connections
    const pg = connect(Number(upstream.port || 5432), upstream.hostname)
    sockets.add(client)
    sockets.add(pg)
    const statements = new Map<string, string>()
    let pending: Buffer = Buffer.alloc(0)
    let started = false

    const onFrontend = (chunk: Buffer) => {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk])
      for (;;) {
        if (!started) {
          // The startup message (or an SSLRequest before it) has no type byte.
          if (pending.length < 8) return
          const length = pending.readInt32BE(0)
          if (pending.length < length) return
          const code = pending.readInt32BE(4)
          pending = pending.subarray(length)
          if (code !== 80877103) started = true
          continue
        }
        if (pending.length < 5) return
        const type = String.fromCharCode(pending[0]!)
        const length = pending.readInt32BE(1)
        if (pending.length < 1 + length) return
        const body = pending.subarray(5, 1 + length)
        pending = pending.subarray(1 + length)
        if (type === "P") {
          const [name, at] = cstring(body, 0)
          const [text] = cstring(body, at)
          statements.set(name, normalize(text))
        } else if (type === "B") {
          const [, at] = cstring(body, 0)
          const [name, at2] = cstring(body, at)
          const formats = body.readInt16BE(at2)
          const params = body.readInt16BE(at2 + 2 + 2 * formats)
          executed.push({ connection: id, text: statements.get(name) ?? `<unknown statement ${name}>`, params })
        } else if (type === "Q") {
          const [text] = cstring(body, 0)
          executed.push({ connection: id, text: normalize(text), params: 0 })
        }
      }
    }

    client.on("data", (chunk: Buffer) => {
      onFrontend(chunk)
      pg.write(chunk)
    })
    pg.pipe(client)
    const end = () => {
      client.destroy()
      pg.destroy()
      sockets.delete(client)
      sockets.delete(pg)
    }
    client.on("error", end).on("close", end)
    pg.on("error", end).on("close", end)
  })

  return new Promise((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number }
      const url = new URL(target)
      url.hostname = "127.0.0.1"
      url.port = String(port)
      resolve({
        url: url.toString(),
        take: () => {
          const out = executed
          executed = []
          return out
        },
        close: () =>
          new Promise<void>((done) => {
            for (const socket of sockets) socket.destroy()
            server.close(() => done())
          })
      })
    })
  })
}

/** One request's statements, each transaction (BEGIN ... COMMIT on one connection) as one group. */
export type Unit = { readonly tx: false; readonly statement: string } | { readonly tx: true; readonly statements: ReadonlyArray<string> }

const isBegin = (text: string) => /^(BEGIN|START TRANSACTION)\b/i.test(text)
const isEnd = (text: string) => /^(COMMIT|ROLLBACK|END)\b/i.test(text)

/**
 * Groups executions into units in order of their first statement: a statement outside a
 * transaction is its own unit; BEGIN..COMMIT on one connection is one. `ignore` drops
 * statements that run off the request's path (the once-a-minute last_used_at touch).
 */
export const units = (executed: ReadonlyArray<Executed>, ignore: (text: string) => boolean = () => false): Array<Unit> => {
  const out: Array<Unit> = []
  const open = new Map<number, Array<string>>()
  for (const e of executed) {
    if (ignore(e.text)) continue
    const label = `${e.text} [${e.params} params]`
    const current = open.get(e.connection)
    if (current !== undefined) {
      current.push(label)
      if (isEnd(e.text)) open.delete(e.connection)
    } else if (isBegin(e.text)) {
      const statements = [label]
      open.set(e.connection, statements)
      out.push({ tx: true, statements })
    } else {
      out.push({ tx: false, statement: label })
    }
  }
  return out
}

/** The units as lines, for a diff in an error message. */
export const describeUnits = (list: ReadonlyArray<Unit>): Array<string> =>
  list.flatMap((u) => (u.tx ? ["TRANSACTION", ...u.statements.map((s) => `  ${s}`)] : [u.statement]))
