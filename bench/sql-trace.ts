/**
 * A PostgreSQL wire proxy that records the statements its clients execute (`Parse`, `Bind`,
 * `Query`, each with its connection), passing every byte through: run.ts checks with it that the
 * baseline runs our statements in our transactions. For a handful of requests, never under load.
 */
import { connect, createServer } from "node:net"
import { listen } from "./shared.ts"

/** A statement executed on a connection: its text, white space collapsed, and its number of parameters. */
type Executed = { readonly connection: number; readonly label: string }

/** A DATABASE_URL through the proxy, and the statements executed since the last `take`, in order. */
export type Tracer = { readonly url: string; readonly take: () => Array<Executed>; readonly close: () => Promise<void> }

const cstring = (buf: Buffer, at: number): [string, number] => {
  const end = buf.indexOf(0, at)
  return [buf.toString("utf8", at, end), end + 1]
}

export const startTracer = async (target: string): Promise<Tracer> => {
  const upstream = new URL(target)
  const executed: Array<Executed> = []
  let connections = 0
  const server = createServer((client) => {
    const connection = ++connections
    const pg = connect(Number(upstream.port || 5432), upstream.hostname)
    const statements = new Map<string, string>()
    let pending = Buffer.alloc(0)
    let started = false
    client.on("data", (chunk: Buffer) => {
      pg.write(chunk)
      pending = Buffer.concat([pending, chunk])
      for (;;) {
        // The startup message (or an SSLRequest before it) has no type byte.
        const head = started ? 1 : 0
        if (pending.length < head + 4 || pending.length < head + pending.readInt32BE(head)) return
        const length = head + pending.readInt32BE(head)
        const [type, body] = [String.fromCharCode(pending[0]!), pending.subarray(head + 4, length)]
        if (!started) started = pending.readInt32BE(4) !== 80877103
        else if (type === "P") {
          const [name, at] = cstring(body, 0)
          statements.set(name, cstring(body, at)[0].replace(/\s+/g, " ").trim())
        } else if (type === "B") {
          const [name, at] = cstring(body, cstring(body, 0)[1])
          const params = body.readInt16BE(at + 2 + 2 * body.readInt16BE(at))
          executed.push({ connection, label: `${statements.get(name) ?? `<unknown statement ${name}>`} [${params} params]` })
        } else if (type === "Q") executed.push({ connection, label: `${cstring(body, 0)[0].replace(/\s+/g, " ").trim()} [0 params]` })
        pending = pending.subarray(length)
      }
    })
    pg.pipe(client)
    // Either side gone ends both; closing the proxy ends every client, and so its upstream connection.
    const end = () => [client, pg].forEach((socket) => socket.destroy())
    client.on("error", end).on("close", end)
    pg.on("error", end).on("close", end)
  })
  const { port, close } = await listen(server)
  const url = Object.assign(new URL(target), { hostname: "127.0.0.1", port: String(port) })
  return { url: url.toString(), take: () => executed.splice(0), close }
}

/** A statement alone, or a transaction's (BEGIN ... COMMIT on one connection) as one group. */
export type Unit = { readonly tx: boolean; readonly statements: Array<string> }

/** In order of their first statement; `ignore` drops the statements that run off the request's path. */
export const units = (executed: ReadonlyArray<Executed>, ignore: (text: string) => boolean): Array<Unit> => {
  const out: Array<Unit> = []
  const open = new Map<number, Array<string>>()
  for (const { connection, label } of executed) {
    if (ignore(label)) continue
    const current = open.get(connection)
    if (current !== undefined) {
      current.push(label)
      if (/^(COMMIT|ROLLBACK|END)\b/i.test(label)) open.delete(connection)
    } else {
      const unit = { tx: /^(BEGIN|START TRANSACTION)\b/i.test(label), statements: [label] }
      if (unit.tx) open.set(connection, unit.statements)
      out.push(unit)
    }
  }
  return out
}

/** The units as lines, for a difference in an error message. */
export const describeUnits = (list: ReadonlyArray<Unit>): Array<string> =>
  list.flatMap((u) => (u.tx ? ["TRANSACTION", ...u.statements.map((s) => `  ${s}`)] : u.statements))
