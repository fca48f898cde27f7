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
 * A request waits for PGlite at most `waitLimitMs` (5 s by default) while another connection
 * holds it (its transaction, or one long statement). Past that it is refused without running:
 * SQLSTATE 55P03 (lock_not_available), the connection ready for its next request, or, for a new
 * connection's startup, a FATAL error that ends it. From then on, until that connection lets the
 * database go, every other connection's request is refused at once: a client learns within the
 * bound that the database does not answer (ruling 27), however many are queued.
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

/**
 * What a unit is: a request; a new connection's startup packet (refused by ending the connection);
 * or a cleanup, which runs even though its connection is gone (the rollback of an abandoned
 * transaction) and is never refused.
 */
type UnitKind = "request" | "startup" | "cleanup"

interface Unit {
  readonly conn: WireConnection
  readonly messages: ReadonlyArray<Uint8Array>
  readonly done: () => void
  readonly kind: UnitKind
  /** When it was queued (performance.now()). */
  readonly since: number
}

/** How long a request waits for PGlite while another connection holds it, by default. */
export const WAIT_LIMIT_MS = 5_000

/** SQLSTATE of a request refused after waiting: lock_not_available, as a lock_timeout gives on PostgreSQL. */
const LOCK_NOT_AVAILABLE = "55P03"

export interface WireOptions {
  /** How long a request waits for PGlite while another connection holds it (default WAIT_LIMIT_MS). */
  readonly waitLimitMs?: number
}

export class PgliteWire {
  readonly db: PGlite
  private readonly queue: Array<Unit> = []
  private owner: WireConnection | null = null
  /** The connection whose unit is running. */
  private current: WireConnection | null = null
  /** The connection that held PGlite past the wait limit: until it lets go, every other one's request is refused at once. */
  private holder: WireConnection | null = null
  private watchdog: ReturnType<typeof setTimeout> | undefined
  private readonly waitLimitMs: number
  private running = false
  private broken = false
  private closed = false
  private server: net.Server | null = null
  private readonly connections = new Set<WireConnection>()
  private attached = 0

  private constructor(db: PGlite, options: WireOptions) {
    this.db = db
    this.waitLimitMs = options.waitLimitMs ?? WAIT_LIMIT_MS
  }

  /** Opens (creating when absent) the database under `dataDir`; in memory when undefined. */
  static async open(dataDir: string | undefined, options: WireOptions = {}): Promise<PgliteWire> {
    return new PgliteWire(await openPglite(dataDir), options)
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
    clearTimeout(this.watchdog)
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
  submit(conn: WireConnection, messages: ReadonlyArray<Uint8Array>, kind: UnitKind = "request"): Promise<void> {
    return new Promise((resolve) => {
      const unit: Unit = { conn, messages, done: resolve, kind, since: performance.now() }
      // While a unit runs it may be the one that lets go (a COMMIT whose answer is out already):
      // the pump decides once it ends.
      if (kind !== "cleanup" && this.holder !== null && conn !== this.holder && this.current === null) return this.refuse(unit)
      this.queue.push(unit)
      void this.pump()
      this.watch()
    })
  }

  /** Arms the timer for the oldest unit still waiting, if any. */
  private watch(): void {
    if (this.watchdog !== undefined || this.closed) return
    const oldest = this.queue.find((u) => u.kind !== "cleanup")
    if (oldest === undefined) return
    this.watchdog = setTimeout(() => {
      this.watchdog = undefined
      this.expire()
    }, Math.max(0, oldest.since + this.waitLimitMs - performance.now()))
    // Waiting units never keep the process alive on their own.
    this.watchdog.unref()
  }

  /** Once a unit has waited the limit, every unit waiting behind the connection that holds PGlite is refused. */
  private expire(): void {
    const now = performance.now()
    const holder = this.owner ?? this.current
    const overdue = (u: Unit) => u.kind !== "cleanup" && u.conn !== holder && now - u.since >= this.waitLimitMs
    if (holder !== null && this.queue.some(overdue)) {
      this.holder = holder
      this.refuseWaiting()
    }
    this.watch()
  }

  /** Refuses every waiting unit that is not the holder's. */
  private refuseWaiting(): void {
    for (const unit of this.queue.splice(0)) {
      if (unit.kind === "cleanup" || unit.conn === this.holder) this.queue.push(unit)
      else this.refuse(unit)
    }
  }

  private refuse(unit: Unit): void {
    const message = `embedded database: another connection has held it for more than ${this.waitLimitMs / 1000} s; try again`
    if (unit.kind === "startup") unit.conn.fail(message, LOCK_NOT_AVAILABLE)
    else unit.conn.refuse(message, LOCK_NOT_AVAILABLE, unit.messages)
    unit.done()
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
        if (!unit.conn.alive && unit.kind !== "cleanup") {
          unit.done()
          continue
        }
        this.current = unit.conn
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
        this.current = null
        if (this.holder !== null) {
          if (this.owner === this.holder) this.refuseWaiting()
          else this.holder = null
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
      await this.submit(conn, [encodeQuery("ROLLBACK")], "cleanup")
    }
    const closes = conn.names.closeAll()
    if (closes !== undefined && !this.closed) await this.submit(conn, [closes], "cleanup")
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

  /** Ends this connection with a FATAL error (SQLSTATE `code`); nothing more of it runs. */
  fail(message: string, code = "XX000"): void {
    if (!this.alive) return
    this.alive = false
    this.stream.end(frame(0x45, `SFATAL\0VFATAL\0C${code}\0M${message.replaceAll("\0", "")}\0\0`))
  }

  /** Answers a request of `messages` that never ran: an error (SQLSTATE `code`), then ready for the next, outside any transaction. */
  refuse(message: string, code: string, messages: ReadonlyArray<Uint8Array>): void {
    this.names.notRun(messages)
    this.write(frame(0x45, `SERROR\0VERROR\0C${code}\0M${message.replaceAll("\0", "")}\0\0`))
    this.write(frame(0x5a, "I"))
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
          this.enqueue([message], "startup")
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

  private enqueue(messages: ReadonlyArray<Uint8Array>, kind: "request" | "startup" = "request"): void {
    // submit does not reject (a failing unit ends its connection); were it to, end the connection
    // rather than leave the rejection unhandled.
    this.chain = this.chain.then(() => this.wire.submit(this, messages, kind)).catch(() => this.destroy())
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
