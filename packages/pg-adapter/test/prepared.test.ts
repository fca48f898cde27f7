/**
 * Prepared statements on the embedded database: each connection's are its own, as on a
 * PostgreSQL server (two connections may use one name for two statements), and they go with the
 * connection, so a long-running server does not pile up the statements of clients long gone.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"
import { PgClient } from "@effect/sql-pg"
import type { Duplex } from "node:stream"
import { PgliteWire } from "../src/embedded/PgliteWire.ts"
import { StatementNames } from "../src/embedded/StatementNames.ts"

const frame = (type: string, body: Buffer) => {
  const out = Buffer.alloc(5 + body.length)
  out.write(type, 0, "latin1")
  out.writeInt32BE(4 + body.length, 1)
  body.copy(out, 5)
  return out
}
const cstr = (s: string) => Buffer.from(`${s}\0`)
const int16 = (n: number) => Buffer.from([n >> 8, n & 0xff])
const parse = (name: string, sql: string) => frame("P", Buffer.concat([cstr(name), cstr(sql), int16(0)]))
const bind = (name: string) => frame("B", Buffer.concat([cstr(""), cstr(name), int16(0), int16(0), int16(0)]))
const execute = frame("E", Buffer.concat([cstr(""), Buffer.alloc(4)]))
const sync = frame("S", Buffer.alloc(0))
const close = (name: string) => frame("C", Buffer.concat([Buffer.from("S"), cstr(name)]))
const query = (sql: string) => frame("Q", cstr(sql))

/** A bare protocol client on a wire connection: sends a unit, answers its messages (type, body). */
const rawClient = async (stream: Duplex) => {
  let buffer = Buffer.alloc(0)
  let collected: Array<[string, Buffer]> = []
  let done: ((messages: Array<[string, Buffer]>) => void) | undefined
  stream.on("data", (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk])
    while (buffer.length >= 5 && buffer.length >= buffer.readInt32BE(1) + 1) {
      const length = buffer.readInt32BE(1) + 1
      const type = String.fromCharCode(buffer[0]!)
      collected.push([type, buffer.subarray(5, length)])
      buffer = buffer.subarray(length)
      if (type === "Z") {
        const messages = collected
        collected = []
        done?.(messages)
      }
    }
  })
  const send = (...frames: Array<Buffer>) =>
    new Promise<Array<[string, Buffer]>>((resolve) => {
      done = resolve
      stream.write(Buffer.concat(frames))
    })
  const params = Buffer.concat([cstr("user"), cstr("postgres"), cstr("database"), cstr("postgres"), Buffer.from([0])])
  const startup = Buffer.alloc(8)
  startup.writeInt32BE(8 + params.length, 0)
  startup.writeInt32BE(196608, 4)
  await send(startup, params)
  /** The first column of the first row, or the error's message. */
  const value = async (...frames: Array<Buffer>) => {
    const messages = await send(...frames)
    const error = messages.find(([type]) => type === "E")
    if (error !== undefined) return `error: ${/M([^\0]*)/.exec(error[1].toString())?.[1]}`
    const row = messages.find(([type]) => type === "D")?.[1]
    return row === undefined ? undefined : row.subarray(6, 6 + row.readInt32BE(2)).toString()
  }
  return { send, value }
}

const openWire = Effect.acquireRelease(Effect.promise(() => PgliteWire.open(undefined)), (w) => Effect.promise(() => w.close()))

const preparedCount = (client: { value: (...frames: Array<Buffer>) => Promise<string | undefined> }) =>
  client.value(query("SELECT count(*) FROM pg_prepared_statements"))

/** Waits until `check` holds (the wire closes a connection's statements once it has noticed it is gone). */
const eventually = async (check: () => Promise<boolean>) => {
  for (let i = 0; i < 100; i++) {
    if (await check()) return true
    await new Promise((r) => setTimeout(r, 20))
  }
  return false
}

describe("prepared statements on the embedded database", () => {
  it("a connection's statement names are its own: prefixed on the way in, unnamed ones untouched", () => {
    const names = new StatementNames("w7_")
    const renamed = Buffer.from(names.scope(parse("s1", "SELECT 1")))
    assert.deepStrictEqual(renamed, parse("w7_s1", "SELECT 1"))
    assert.deepStrictEqual(Buffer.from(names.scope(bind("s1"))), bind("w7_s1"))
    assert.deepStrictEqual(Buffer.from(names.scope(parse("", "SELECT 2"))), parse("", "SELECT 2"))
    assert.deepStrictEqual(Buffer.from(names.scope(bind(""))), bind(""))
    assert.deepStrictEqual(Buffer.from(names.scope(execute)), execute)
    assert.deepStrictEqual([...names.held], ["w7_s1"])
    names.scope(parse("s2", "SELECT 3"))
    assert.deepStrictEqual(Buffer.from(names.scope(close("s1"))), close("w7_s1"))
    assert.deepStrictEqual([...names.held], ["w7_s2"])
    assert.deepStrictEqual(Buffer.from(names.closeAll()!), Buffer.concat([close("w7_s2"), sync]))
    assert.isUndefined(names.closeAll())
  })

  it.live("two connections may prepare one name for two statements; a connection's go when it goes", () =>
    Effect.gen(function*() {
      const wire = yield* openWire
      const streamA = wire.connect()
      const streamB = wire.connect()
      const [a, b] = yield* Effect.promise(() => Promise.all([rawClient(streamA), rawClient(streamB)]))
      yield* Effect.promise(async () => {
        assert.strictEqual(await a.value(parse("s1", "SELECT 'a'"), bind("s1"), execute, sync), "a")
        assert.strictEqual(await b.value(parse("s1", "SELECT 'b'"), bind("s1"), execute, sync), "b")
        assert.strictEqual(await a.value(bind("s1"), execute, sync), "a")
        assert.strictEqual(await b.value(bind("s1"), execute, sync), "b")
        assert.strictEqual(await b.value(parse("s2", "SELECT 'b2'"), sync), undefined)
        assert.strictEqual(await preparedCount(a), "3")
        // A closes its own s1; B's s1 is untouched.
        await a.send(close("s1"), sync)
        assert.strictEqual(await b.value(bind("s1"), execute, sync), "b")
        assert.match(String(await a.value(bind("s1"), execute, sync)), /^error: .*does not exist/)
        // B goes: its statements are closed for it.
        streamB.destroy()
        assert.isTrue(await eventually(async () => (await preparedCount(a)) === "0"))
      })
    }))

  it.effect("the product's client prepares its statements; many connections at once each get their own results, and leave none behind", () =>
    Effect.gen(function*() {
      const wire = yield* openWire
      const layer = PgClient.layer({ stream: () => wire.connect(), username: "postgres", database: "postgres", maxConnections: 4 })
      const results = yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const one = (i: number) => sql<{ x: number }>`SELECT ${i}::int + ${i % 3}::int AS x`.pipe(Effect.map((r) => r[0]!.x))
        const twice = yield* Effect.all(Array.from({ length: 80 }, (_, i) => one(i % 40)), { concurrency: "unbounded" })
        const prepared = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_prepared_statements`
        return { twice, prepared: prepared[0]!.n }
      }).pipe(Effect.provide(layer))
      assert.deepStrictEqual(results.twice, Array.from({ length: 80 }, (_, i) => (i % 40) + ((i % 40) % 3)))
      assert.isAbove(results.prepared, 0)
      const probe = yield* Effect.promise(() => rawClient(wire.connect()))
      assert.isTrue(yield* Effect.promise(() => eventually(async () => (await preparedCount(probe)) === "0")))
    }))
})
