/**
 * Ownership of an embedded data directory. PGlite admits one process: the owner holds
 * `owner.pid`, keeps the files under `pgdata/` and serves `.s.PGSQL.5432`; every other process
 * connects to that socket. A pid file whose process is gone is stale and taken over.
 */
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import type { Duplex } from "node:stream"
import { alive, clusterDir } from "./Cluster.ts"
import type { PgliteWire } from "./PgliteWire.ts"

/** PGlite (WASM) loads only in processes that own an embedded database. */
const openWire = async (dataDir: string | undefined): Promise<PgliteWire> =>
  (await import("./PgliteWire.ts")).PgliteWire.open(dataDir)

export interface EmbeddedDatabase {
  /** True when this process owns PGlite. */
  readonly owner: boolean
  readonly connect: () => Duplex
  readonly dataDir: string | undefined
}

export class EmbeddedInUse extends Error {
  readonly dataDir: string
  readonly pid: number
  constructor(dataDir: string, pid: number) {
    super(
      `The embedded database at ${dataDir} is in use by process ${pid}. A second \`chamber serve\` cannot share it: ` +
        "stop the other one, or set DATABASE_URL to use PostgreSQL."
    )
    this.dataDir = dataDir
    this.pid = pid
  }
}

export const socketPath = (dataDir: string) => path.join(dataDir, ".s.PGSQL.5432")
const pidPath = (dataDir: string) => path.join(dataDir, "owner.pid")


/** The pid of the live process that owns `dataDir`, if any. */
export const embeddedOwner = (dataDir: string): number | undefined => {
  try {
    const pid = Number(fs.readFileSync(pidPath(dataDir), "utf8").trim())
    return Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid) ? pid : undefined
  } catch {
    return undefined
  }
}

/** Takes the pid file atomically; false when a live process holds it. */
const claim = (dataDir: string): boolean => {
  for (let i = 0; i < 3; i++) {
    try {
      fs.writeFileSync(pidPath(dataDir), String(process.pid), { flag: "wx" })
      return true
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e
      if (embeddedOwner(dataDir) !== undefined) return false
      fs.rmSync(pidPath(dataDir), { force: true })
    }
  }
  return false
}

const waitForSocket = (file: string) =>
  Effect.tryPromise({
    try: async () => {
      for (let i = 0; i < 200; i++) {
        if (fs.existsSync(file)) return
        await new Promise((r) => setTimeout(r, 50))
      }
      throw new Error(`the embedded database socket ${file} did not appear`)
    },
    catch: (e) => e as Error
  })

/**
 * Opens the embedded database for this process (memory only when `dataDir` is undefined),
 * released with the scope. `requireOwnership` refuses when another process serves it.
 */
export const openEmbedded = (dataDir: string | undefined, options?: { readonly requireOwnership?: boolean }) =>
  Effect.gen(function*() {
    if (dataDir === undefined) {
      const wire = yield* Effect.acquireRelease(Effect.promise(() => openWire(undefined)), (w) => Effect.promise(() => w.close()))
      return { owner: true, connect: () => wire.connect(), dataDir } satisfies EmbeddedDatabase
    }
    const dir = path.resolve(dataDir)
    fs.mkdirSync(dir, { recursive: true })
    if (claim(dir)) {
      const wire = yield* Effect.acquireRelease(
        Effect.promise(async () => {
          const w = await openWire(clusterDir(dir))
          fs.rmSync(socketPath(dir), { force: true })
          await w.listen(socketPath(dir))
          return w
        }),
        (w) =>
          Effect.promise(async () => {
            await w.close()
            fs.rmSync(socketPath(dir), { force: true })
            fs.rmSync(pidPath(dir), { force: true })
          })
      )
      return { owner: true, connect: () => wire.connect(), dataDir: dir } satisfies EmbeddedDatabase
    }
    const pid = embeddedOwner(dir) ?? 0
    if (options?.requireOwnership === true) return yield* Effect.die(new EmbeddedInUse(dir, pid))
    yield* waitForSocket(socketPath(dir)).pipe(Effect.orDie)
    return { owner: false, connect: () => net.createConnection(socketPath(dir)), dataDir: dir } satisfies EmbeddedDatabase
  })

