/**
 * The embedded section's per-statement latency (bench/README.md "Embedded database (PGlite)"):
 * the same core operations on one chamber of BENCH_MEMBERS members seeded into embedded PGlite
 * and into PostgreSQL, measured one at a time, in alternating rounds.
 *
 * - product: the operation as the API runs it (core service, repository, `@effect/sql-pg`; on
 *   PGlite through PgliteWire, as `chamber serve` opens it);
 * - engine (reads only): each statement the operation executes, captured as its wire messages,
 *   prepared once and then executed alone: on PGlite straight into the engine
 *   (`execProtocolRaw`, neither PgliteWire nor the driver), on PostgreSQL over a plain socket;
 *   on both planned at each execution (`plan_cache_mode = force_custom_plan`, the embedded
 *   database's setting).
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { mkdtempSync, rmSync } from "node:fs"
import * as net from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Duplex } from "node:stream"
import { Keys, Members, Tenants } from "../packages/core/src/index.ts"
import { embeddedClient, migrate, ServicesLive, StorageLive } from "../packages/pg-adapter/src/index.ts"
import { PgliteWire } from "../packages/pg-adapter/src/embedded/PgliteWire.ts"
import { memberBodies, memberInputs } from "./seed-data.ts"
import { importFromPackage } from "./shared.ts"

const { PgClient } = (await importFromPackage("pg-adapter", "@effect/sql-pg")) as typeof import("../packages/pg-adapter/node_modules/@effect/sql-pg/dist/index.js")

const SAMPLES = Number(process.env.BENCH_EMBEDDED_SAMPLES ?? 200)
const ROUNDS = Math.max(1, Number(process.env.BENCH_EMBEDDED_ROUNDS ?? 2))
const WARMUP = 20

type Storage = Layer.Success<ReturnType<typeof StorageLive>>
type Services = ManagedRuntime.ManagedRuntime<Storage, unknown>
type Operation = Effect.Effect<unknown, unknown, Storage>

interface Chamber {
  readonly tenant: number
  readonly key: string
  readonly memberId: number
  readonly seedMs: number
}

const seed = (members: number) =>
  Effect.gen(function*() {
    const tenants = yield* Tenants
    const keys = yield* Keys
    const service = yield* Members
    const tenant = yield* tenants.create({ name: "Embedded Bench Chamber", website: "https://embedded-bench.example" })
    yield* tenants.addUser(tenant.id, "admin@embedded-bench.example", "chamber_admin")
    yield* tenants.addField(tenant.id, { resource: "member", key: "membership_level", label: "Membership level", api_visible: true })
    yield* tenants.addField(tenant.id, { resource: "member", key: "board_member", label: "Board member", api_visible: true })
    yield* tenants.addField(tenant.id, { resource: "member", key: "internal_notes", label: "Internal notes", api_visible: false })
    const started = performance.now()
    yield* Effect.forEach(memberInputs(members), (input) => service.create(tenant.id, input), { concurrency: 8, discard: true })
    const seedMs = performance.now() - started
    const middle = yield* service.list(tenant.id, { page: Math.max(1, Math.ceil(members / 200)) })
    const key = yield* keys.mint({ tenant: tenant.id, asEmail: "admin@embedded-bench.example", name: "bench", scopes: "read", dailyLimit: 2_000_000_000 })
    return { tenant: tenant.id, key: key.key, memberId: Number(middle.rows[0]?.id ?? 1), seedMs } satisfies Chamber
  }).pipe(Effect.orDie)

/** The operations measured, each a core call the API makes for one request (or a part of one). */
const operations = (chamber: Chamber): ReadonlyArray<{ readonly name: string; readonly read: boolean; readonly run: Operation }> => {
  const next = memberBodies(777)
  return [
    { name: "key lookup (every request)", read: true, run: Effect.gen(function*() { return yield* (yield* Keys).authenticate(chamber.key) }) },
    { name: "member by id", read: true, run: Effect.gen(function*() { return yield* (yield* Members).get(chamber.tenant, chamber.memberId) }) },
    { name: "members page 1 (by name)", read: true, run: Effect.gen(function*() { return yield* (yield* Members).list(chamber.tenant, { page: 1 }) }) },
    {
      name: "members page 3 (-created_at)",
      read: true,
      run: Effect.gen(function*() { return yield* (yield* Members).list(chamber.tenant, { page: 3, sort: "-created_at" }) })
    },
    { name: "member create (transaction)", read: false, run: Effect.gen(function*() { return yield* (yield* Members).create(chamber.tenant, next()) }) }
  ]
}

// ---------------------------------------------------------------------------------------------
// Wire messages: capture what a client sends, replay it prepared.

/** A client stream whose outgoing frontend messages are recorded while `recording` is set, one entry per Sync. */
const tap = (stream: Duplex, into: { recording: Array<Buffer> | undefined }): Duplex => {
  const write = stream.write.bind(stream) as (chunk: unknown, ...rest: Array<unknown>) => boolean
  let pending: Array<Buffer> = []
  ;(stream as { write: unknown }).write = (chunk: unknown, ...rest: Array<unknown>) => {
    if (into.recording !== undefined && typeof chunk !== "string") {
      let bytes = Buffer.from(chunk as Uint8Array)
      while (bytes.length >= 5) {
        const length = bytes.readInt32BE(1) + 1
        pending.push(bytes.subarray(0, length))
        if (bytes[0] === 0x53 /* Sync */) {
          into.recording.push(Buffer.concat(pending))
          pending = []
        }
        bytes = bytes.subarray(length)
      }
    }
    return write(chunk, ...rest)
  }
  return stream
}

const messages = (unit: Buffer): Array<Buffer> => {
  const out: Array<Buffer> = []
  for (let at = 0; at < unit.length; at += unit.readInt32BE(at + 1) + 1) out.push(unit.subarray(at, at + unit.readInt32BE(at + 1) + 1))
  return out
}

/** A message with the empty name at byte `at` (its NUL) replaced by `name`. */
const named = (message: Buffer, at: number, name: string): Buffer => {
  const body = Buffer.concat([message.subarray(5, at), Buffer.from(`${name}\0`), message.subarray(at + 1)])
  const out = Buffer.alloc(5 + body.length)
  out[0] = message[0]!
  out.writeInt32BE(4 + body.length, 1)
  body.copy(out, 5)
  return out
}

const SYNC = Buffer.from([0x53, 0, 0, 0, 4])

const frame = (type: number, body: string): Buffer => {
  const bytes = Buffer.from(body, "utf8")
  const out = Buffer.alloc(5 + bytes.length)
  out[0] = type
  out.writeInt32BE(4 + bytes.length, 1)
  bytes.copy(out, 5)
  return out
}

/** An unnamed Parse/Bind/Describe/Execute/Sync as a named Parse (sent once) and the rest (sent each time). */
const prepared = (unit: Buffer, name: string) => {
  const all = messages(unit)
  const parse = all.find((m) => m[0] === 0x50)
  const bind = all.find((m) => m[0] === 0x42)
  if (parse === undefined || bind === undefined) throw new Error("captured statement is not Parse + Bind")
  return {
    parse: Buffer.concat([named(parse, 5, name), SYNC]),
    execute: Buffer.concat([named(bind, 6, name), ...all.filter((m) => m[0] !== 0x50 && m[0] !== 0x42)]),
    close: Buffer.concat([Buffer.from([0x43, 0, 0, 0, 6 + name.length, 0x53]), Buffer.from(`${name}\0`), SYNC])
  }
}

const hasError = (answer: Uint8Array) => messages(Buffer.from(answer)).some((m) => m[0] === 0x45)

/** A bare PostgreSQL connection (trust authentication only): send a unit, wait for ReadyForQuery. */
const rawPostgres = async (url: URL) => {
  const socket = net.createConnection(Number(url.port || 5432), url.hostname)
  let buffer: Buffer = Buffer.alloc(0)
  let answer: Array<Buffer> = []
  let waiting: ((answer: Buffer) => void) | undefined
  let refused: string | undefined
  socket.on("data", (chunk: Buffer) => {
    buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk])
    while (buffer.length >= 5 && buffer.length >= buffer.readInt32BE(1) + 1) {
      const message = buffer.subarray(0, buffer.readInt32BE(1) + 1)
      buffer = buffer.subarray(message.length)
      if (message[0] === 0x52 /* Authentication */ && message.readInt32BE(5) !== 0) refused = "needs a password"
      answer.push(message)
      if (message[0] === 0x5a /* ReadyForQuery */ || refused !== undefined) {
        const done = Buffer.concat(answer)
        answer = []
        waiting?.(done)
      }
    }
  })
  let failed: ((error: Error) => void) | undefined
  socket.on("error", (error) => failed?.(error))
  const send = (bytes: Buffer) =>
    new Promise<Buffer>((resolve, reject) => {
      waiting = resolve
      failed = reject
      socket.write(bytes)
    })
  const params = Buffer.from(`user\0${decodeURIComponent(url.username || "postgres")}\0database\0${url.pathname.slice(1)}\0\0`)
  const startup = Buffer.alloc(8 + params.length)
  startup.writeInt32BE(startup.length, 0)
  startup.writeInt32BE(196608, 4)
  params.copy(startup, 8)
  await send(startup)
  if (refused !== undefined) socket.destroy()
  // Planned at every execution, as the embedded database plans them (Pglite.ts): the engines compared on the same work.
  else await send(frame(0x51, "SET plan_cache_mode = force_custom_plan\0"))
  return { send: refused === undefined ? send : undefined, refused, close: () => socket.destroy() }
}

// ---------------------------------------------------------------------------------------------

const percentile = (values: ReadonlyArray<number>, p: number) => {
  const sorted = Float64Array.from(values).sort()
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!
}

const sample = async (run: () => Promise<unknown>, into: Array<number>) => {
  for (let i = 0; i < WARMUP; i++) await run()
  for (let i = 0; i < SAMPLES; i++) {
    const started = performance.now()
    await run()
    into.push(performance.now() - started)
  }
}

export interface StatementRow {
  readonly name: string
  readonly postgres: ReadonlyArray<number>
  readonly pglite: ReadonlyArray<number>
  readonly enginePostgres?: ReadonlyArray<number>
  readonly enginePglite?: ReadonlyArray<number>
}

export interface StatementsResult {
  readonly rows: ReadonlyArray<StatementRow>
  readonly seedMs: { readonly pglite: number; readonly postgres: number }
  readonly note?: string
}

/** Seeds both databases, then measures every operation in alternating rounds. */
export const benchStatements = async (dbUrl: string, members: number): Promise<StatementsResult> => {
  const dir = mkdtempSync(join(tmpdir(), "chamber-embedded-bench-"))
  const wire = await PgliteWire.open(join(dir, "pgdata"))
  const capture: { recording: Array<Buffer> | undefined } = { recording: undefined }
  const pglite: Services = ManagedRuntime.make(
    ServicesLive.pipe(Layer.provideMerge(embeddedClient({ owner: true, connect: () => wire.connect(), dataDir: dir })))
  )
  const postgres: Services = ManagedRuntime.make(StorageLive({ _tag: "Postgres", url: dbUrl, maxConnections: 10 }))
  // One more client per database, unprepared, only to capture each statement's messages.
  const url = new URL(dbUrl)
  const captureLayer = (stream: () => Duplex, username: string, database: string) =>
    ServicesLive.pipe(Layer.provideMerge(PgClient.layer({ stream: () => tap(stream(), capture), username, database, prepare: false, maxConnections: 1 })))
  const pgliteCapture: Services = ManagedRuntime.make(captureLayer(() => wire.connect(), "postgres", "postgres"))
  const postgresCapture: Services = ManagedRuntime.make(
    captureLayer(() => net.createConnection(Number(url.port || 5432), url.hostname), decodeURIComponent(url.username || "postgres"), url.pathname.slice(1))
  )
  const raw = await rawPostgres(url)
  const send = raw.send
  try {
    await pglite.runPromise(migrate)
    const chambers = { pglite: await pglite.runPromise(seed(members)), postgres: await postgres.runPromise(seed(members)) }
    // Statistics for the planner, as the HTTP bench has them (PGlite never analyzes on its own).
    await wire.db.exec("VACUUM ANALYZE")
    if (send !== undefined) await send(frame(0x51, "VACUUM ANALYZE\0"))
    const rows: Array<StatementRow> = []
    const ops = { pglite: operations(chambers.pglite), postgres: operations(chambers.postgres) }
    for (let i = 0; i < ops.pglite.length; i++) {
      const name = ops.pglite[i]!.name
      const row = { name, postgres: [] as Array<number>, pglite: [] as Array<number>, enginePostgres: [] as Array<number>, enginePglite: [] as Array<number> }
      const captured = async (rt: Services, op: Operation) => {
        await rt.runPromise(op) // connected before recording: only the statements are captured
        capture.recording = []
        await rt.runPromise(op)
        const units = capture.recording
        capture.recording = undefined
        return units.map((unit, n) => prepared(unit, `bench_${i}_${n}`))
      }
      const engine = ops.pglite[i]!.read
        ? { pglite: await captured(pgliteCapture, ops.pglite[i]!.run), postgres: await captured(postgresCapture, ops.postgres[i]!.run) }
        : undefined
      if (engine !== undefined) {
        for (const s of engine.pglite) if (hasError(await wire.db.execProtocolRaw(s.parse))) throw new Error(`PGlite refused ${name}`)
        if (send !== undefined) for (const s of engine.postgres) if (hasError(await send(s.parse))) throw new Error(`PostgreSQL refused ${name}`)
      }
      for (let round = 0; round < ROUNDS; round++) {
        await sample(() => pglite.runPromise(ops.pglite[i]!.run), row.pglite)
        await sample(() => postgres.runPromise(ops.postgres[i]!.run), row.postgres)
        if (engine === undefined) continue
        await sample(async () => {
          for (const s of engine.pglite) await wire.db.execProtocolRaw(s.execute)
        }, row.enginePglite)
        if (send !== undefined) {
          await sample(async () => {
            for (const s of engine.postgres) await send(s.execute)
          }, row.enginePostgres)
        }
      }
      if (engine !== undefined) {
        for (const s of engine.pglite) await wire.db.execProtocolRaw(s.close)
        if (send !== undefined) for (const s of engine.postgres) await send(s.close)
      }
      rows.push(engine === undefined ? { name, postgres: row.postgres, pglite: row.pglite } : row)
    }
    return {
      rows,
      seedMs: { pglite: chambers.pglite.seedMs, postgres: chambers.postgres.seedMs },
      ...(raw.refused !== undefined ? { note: `engine figures on PostgreSQL not measured: the server ${raw.refused}` } : {})
    }
  } finally {
    raw.close()
    await Promise.all([pglite.dispose(), postgres.dispose(), pgliteCapture.dispose(), postgresCapture.dispose()])
    await wire.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

export const p = percentile
