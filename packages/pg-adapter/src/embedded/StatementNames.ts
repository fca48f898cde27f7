/**
 * One wire connection's prepared statements, kept apart from every other connection's in PGlite's
 * single session, as a PostgreSQL server keeps each session's: every statement name the
 * connection sends (in Parse, Bind, Describe and Close) gets the connection's own prefix, and the
 * statements it still holds are closed when it goes. Portals need nothing of the kind: a portal
 * lives at most as long as its transaction, and a transaction belongs to one connection.
 * (Statements made with SQL's PREPARE are not renamed: the product's clients do not use it.)
 */
const PARSE = 0x50
const BIND = 0x42
const DESCRIBE = 0x44
const CLOSE = 0x43
const STATEMENT = 0x53
const SYNC = 0x53

export class StatementNames {
  private readonly prefix: Buffer
  /** The session-side names of the statements this connection has prepared and not closed. */
  readonly held = new Set<string>()

  constructor(prefix: string) {
    this.prefix = Buffer.from(prefix, "utf8")
  }

  /** A frontend message (type byte, length, body) as the shared session must see it. */
  scope(message: Uint8Array): Uint8Array {
    switch (message[0]) {
      case PARSE: {
        const renamed = this.rename(message, 5)
        if (renamed !== message) this.held.add(nameAt(renamed, 5))
        return renamed
      }
      case BIND:
        return this.rename(message, message.indexOf(0, 5) + 1)
      case DESCRIBE:
        return message[5] === STATEMENT ? this.rename(message, 6) : message
      case CLOSE: {
        if (message[5] !== STATEMENT) return message
        const renamed = this.rename(message, 6)
        this.held.delete(nameAt(renamed, 6))
        return renamed
      }
      default:
        return message
    }
  }

  /** Takes back what `scope` noted of messages PGlite never ran: what they parsed is not held, what they closed still is. */
  notRun(messages: ReadonlyArray<Uint8Array>): void {
    for (const message of messages) {
      if (message[0] === PARSE && message[5] !== 0) this.held.delete(nameAt(message, 5))
      else if (message[0] === CLOSE && message[5] === STATEMENT && message[6] !== 0) this.held.add(nameAt(message, 6))
    }
  }

  /** Close for each statement still held, then Sync: one unit; undefined when none is held. */
  closeAll(): Uint8Array | undefined {
    if (this.held.size === 0) return undefined
    const frames = [...this.held].map((name) => frame(CLOSE, Buffer.concat([Buffer.from([STATEMENT]), Buffer.from(`${name}\0`, "utf8")])))
    this.held.clear()
    return Buffer.concat([...frames, frame(SYNC, Buffer.alloc(0))])
  }

  /** The message with the prefix inserted before the name that starts at `at`; unnamed ones as they are. */
  private rename(message: Uint8Array, at: number): Uint8Array {
    if (at <= 0 || at >= message.length || message[at] === 0) return message
    const out = Buffer.allocUnsafe(message.length + this.prefix.length)
    out.set(message.subarray(0, at), 0)
    this.prefix.copy(out, at)
    out.set(message.subarray(at), at + this.prefix.length)
    out.writeInt32BE(out.length - 1, 1)
    return out
  }
}

const nameAt = (message: Uint8Array, at: number) => Buffer.from(message.buffer, message.byteOffset + at, message.indexOf(0, at) - at).toString("utf8")

const frame = (type: number, body: Uint8Array): Buffer => {
  const out = Buffer.allocUnsafe(5 + body.length)
  out[0] = type
  out.writeInt32BE(4 + body.length, 1)
  out.set(body, 5)
  return out
}
