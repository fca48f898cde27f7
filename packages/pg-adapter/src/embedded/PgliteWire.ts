/**
 * The embedded database's one door: a PostgreSQL wire-protocol front for a single PGlite
 * session, shared by in-process connections (Duplex pairs) and other processes (a Unix socket
 * in the data directory).
 *
 * PGlite has one session, so connections are serialized here. The unit of work is a run of
 * frontend messages up to a Sync or a simple Query (a complete request); units never
 * interleave. While the session is inside a transaction only the connection that opened it
 * runs; when a connection goes away inside its transaction, that transaction is rolled back.
 *
 * Each connection's prepared statements are its own (StatementNames), and are closed when it
 * goes.
 *
 * A unit whose execution throws ends its own connection with a FATAL ErrorResponse (SQLSTATE
 * XX000), the session is rolled back to idle, and the other connections go on; nothing is left
 * to reject unhandled. A session that cannot be brought back is broken for good: every later
 * unit ends its connection the same way instead of running. (When PGlite's backend exits, e.g.
 * on COPY FROM STDIN, its next query spins forever and would freeze the process.)
 */
import type { PGlite } from "@electric-sql/pglite"
import { Duplex } from "node:stream"
import * as net from "node:net"
import { openPglite } from "./Pglite.ts"
import { StatementNames } from "./StatementNames.ts"

const SSL_REQUEST = 80877103
const CANCEL_REQUEST = 80877102
const PROTOCOL_3 = 196608

interface Unit {
  readonly conn: WireConnection
  readonly messages: ReadonlyArray<Uint8Array>
  readonly done: () => void
  /** Runs even though its connection is gone (the rollback of an abandoned transaction). */
  readonly cleanup?: boolean
}

export class PgliteWire {
  readonly db: PGlite
  private readonly queue: Array<Unit> = []
  private owner: WireConnection | null = null
  private running = false
  private broken = false
  private closed = false
  private server: net.Server | null = null
  private readonly connections = new Set<WireConnection>()
  private attached = 0

  private constructor(db: PGlite) {
    this.db = db
  }

  /** Opens (creating when absent) the database under `dataDir`; in memory when undefined. */
  static async open(dataDir: string | undefined): Promise<PgliteWire> {
    return new PgliteWire(await openPglite(dataDir))
  }

  /** An in-process connection: the client end of a Duplex pair. */
  connect(): Duplex {
    const [client, server] = duplexPair()
    this.attach(server)
    return client
  }

  /** Serves other processes on a Unix socket path. */
  listen(path: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const server = net.createServer((socket) => this.attach(socket))
      server.once("error", reject)
      server.listen(path, () => {
        server.off("error", reject)
        this.server = server
        resolve()
      })
    })
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    for (const c of this.connections) c.destroy()
    if (this.server !== null) await new Promise<void>((r) => this.server!.close(() => r()))
    while (this.running) await new Promise((r) => setTimeout(r, 5))
    await this.db.close()
  }

  private attach(stream: Duplex): void {
    if (this.closed) {
      stream.destroy()
      return
    }
    const conn = new WireConnection(this, stream, new StatementNames(`w${++this.attached}_`))
    this.connections.add(conn)
    stream.on("close", () => {
      this.connections.delete(conn)
      void this.dropConnection(conn)
    })
    stream.on("error", () => stream.destroy())
  }

  /** @internal */
  submit(conn: WireConnection, messages: ReadonlyArray<Uint8Array>, cleanup = false): Promise<void> {
    return new Promise((resolve) => {
      this.queue.push({ conn, messages, done: resolve, cleanup })
      void this.pump()
    })
  }

  private next(): Unit | undefined {
    if (this.owner === null) return this.queue.shift()
    const i = this.queue.findIndex((u) => u.conn === this.owner)
    return i === -1 ? undefined : this.queue.splice(i, 1)[0]
  }

  private async pump(): Promise<void> {
    if (this.running) return
    this.running = true
    try {
      for (let unit = this.next(); unit !== undefined; unit = this.next()) {
        if (!unit.conn.alive && unit.cleanup !== true) {
          unit.done()
          continue
        }
        try {
          if (this.broken) throw new Error("stopped after an earlier failure; restart the process")
          for (const message of unit.messages) {
            await this.db.execProtocolRawStream(message, { onRawData: (data) => unit.conn.write(data) })
          }
          this.owner = this.db.isInTransaction() ? unit.conn : null
        } catch (error) {
          unit.conn.fail(`embedded database: ${messageOf(error)}`)
          this.owner = null
          await this.recover(error)
        }
        unit.done()
      }
    } finally {
      this.running = false
    }
  }

  /** Rolls back what a failed unit left open. If it cannot (PGlite's backend exited, or the
   * rollback throws too), the session is broken. */
  private async recover(error: unknown): Promise<void> {
    if (this.broken) return
    try {
      if ((error as { name?: unknown } | null)?.name === "ExitStatus") throw error
      if (this.db.isInTransaction()) {
        await this.db.execProtocolRawStream(encodeQuery("ROLLBACK"), { onRawData: () => {} })
      }
    } catch {
      this.broken = true
    }
  }

  private async dropConnection(conn: WireConnection): Promise<void> {
    for (let i = this.queue.length - 1; i >= 0; i--) {
      const unit = this.queue[i]!
      if (unit.conn === conn) {
        this.queue.splice(i, 1)
        unit.done()
      }
    }
    if (this.owner === conn && !this.closed) {
      await this.submit(conn, [encodeQuery("ROLLBACK")], true)
    }
    const closes = conn.names.closeAll()
    if (closes !== undefined && !this.closed) await this.submit(conn, [closes], true)
  }
}

class WireConnection {
  private buffer: Buffer = Buffer.alloc(0)
  private started = false
  private pending: Array<Uint8Array> = []
  private chain: Promise<void> = Promise.resolve()
  alive = true

  private readonly wire: PgliteWire
  private readonly stream: Duplex
  readonly names: StatementNames

  constructor(wire: PgliteWire, stream: Duplex, names: StatementNames) {
    this.wire = wire
    this.stream = stream
    this.names = names
    stream.on("data", (chunk: Buffer) => this.receive(chunk))
    stream.on("close", () => {
      this.alive = false
    })
  }

  write(data: Uint8Array): void {
    if (this.alive && data.length > 0) this.stream.write(Buffer.from(data))
  }

  destroy(): void {
    this.stream.destroy()
  }

  /** Ends this connection with a FATAL error; nothing more of it runs. */
  fail(message: string): void {
    if (!this.alive) return
    this.alive = false
    this.stream.end(frame(0x45, `SFATAL\0VFATAL\0CXX000\0M${message.replaceAll("\0", "")}\0\0`))
  }

  private receive(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk])
    for (;;) {
      if (!this.started) {
        if (this.buffer.length < 8) return
        const length = this.buffer.readInt32BE(0)
        if (this.buffer.length < length) return
        const code = this.buffer.readInt32BE(4)
        const message = this.take(length)
        if (code === SSL_REQUEST) {
          this.stream.write("N")
        } else if (code === CANCEL_REQUEST) {
          this.stream.end()
        } else if (code === PROTOCOL_3) {
          this.started = true
          this.enqueue([message])
        } else {
          this.stream.destroy()
          return
        }
        continue
      }
      if (this.buffer.length < 5) return
      const length = this.buffer.readInt32BE(1) + 1
      if (this.buffer.length < length) return
      const type = this.buffer[0]!
      const message = this.take(length)
      if (type === 0x58 /* Terminate */) {
        this.stream.end()
        return
      }
      this.pending.push(this.names.scope(message))
      if (type === 0x53 /* Sync */ || type === 0x51 /* Query */) {
        const unit = this.pending
        this.pending = []
        this.enqueue(unit)
      }
    }
  }

  private take(length: number): Uint8Array {
    const message = new Uint8Array(this.buffer.subarray(0, length))
    this.buffer = this.buffer.subarray(length)
    return message
  }

  private enqueue(messages: ReadonlyArray<Uint8Array>): void {
    // submit does not reject (a failing unit ends its connection); were it to, end the connection
    // rather than leave the rejection unhandled.
    this.chain = this.chain.then(() => this.wire.submit(this, messages)).catch(() => this.destroy())
  }
}

/** A protocol message: type byte, length, body. */
const frame = (type: number, text: string): Uint8Array => {
  const body = Buffer.from(text, "utf8")
  const out = Buffer.alloc(5 + body.length)
  out[0] = type
  out.writeInt32BE(4 + body.length, 1)
  body.copy(out, 5)
  return out
}

const encodeQuery = (text: string): Uint8Array => frame(0x51, text + "\0")

const messageOf = (error: unknown): string =>
  typeof error === "object" && error !== null && "message" in error ? String(error.message) : String(error)

/** Two connected in-memory Duplex streams. */
const duplexPair = (): [Duplex, Duplex] => {
  let a: Duplex, b: Duplex
  const make = (peer: () => Duplex) =>
    new Duplex({
      allowHalfOpen: false,
      read() {},
      write(chunk, _enc, cb) {
        peer().push(chunk)
        cb()
      },
      final(cb) {
        peer().push(null)
        cb()
      },
      destroy(err, cb) {
        const p = peer()
        if (!p.destroyed) p.destroy()
        cb(err)
      }
    })
  a = make(() => b)
  b = make(() => a)
  return [a, b]
}
