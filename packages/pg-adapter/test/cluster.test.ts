/**
 * A new embedded database is made apart (a child process, a scratch directory renamed into place)
 * with the product's settings; scratch directories of processes that are gone are removed, a
 * live process's are left alone; `chamber serve`'s early start hands its cluster over.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { spawnSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { clusterDir, startCluster } from "../src/embedded/Cluster.ts"
import { PgliteWire } from "../src/embedded/PgliteWire.ts"

const tempDir = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "chamber-cluster-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

const open = (cluster: string) =>
  Effect.acquireRelease(Effect.promise(() => PgliteWire.open(cluster)), (w) => Effect.promise(() => w.close()))

const setting = (wire: PgliteWire, name: string) =>
  Effect.promise(() => wire.db.query<{ value: string }>(`SELECT current_setting('${name}') AS value`)).pipe(Effect.map((r) => r.rows[0]!.value))

/** A pid no process has: one that ran and ended. */
const deadPid = () => spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"]).stdout.toString()

describe("a new embedded cluster", () => {
  it.live("is made apart and renamed into place, with a 16 MB buffer pool and a plan per execution; leftovers of dead processes go, a live one's stay", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const cluster = join(dir, "pgdata")
      const dead = `${cluster}.initdb-${deadPid()}`
      const live = `${cluster}.initdb-${process.ppid}`
      mkdirSync(join(dead, "base"), { recursive: true })
      mkdirSync(live)
      const wire = yield* open(cluster)
      assert.strictEqual(yield* setting(wire, "shared_buffers"), "16MB")
      assert.strictEqual(yield* setting(wire, "plan_cache_mode"), "force_custom_plan")
      assert.match(readFileSync(join(cluster, "postgresql.conf"), "utf8"), /^shared_buffers = 16MB/m)
      assert.isTrue(existsSync(join(cluster, "PG_VERSION")))
      assert.deepStrictEqual(readdirSync(dir).sort(), ["pgdata", `pgdata.initdb-${process.ppid}`])
      // What it made is a database: written, closed, opened again.
      yield* Effect.promise(() => wire.db.exec("CREATE TABLE t (v text); INSERT INTO t VALUES ('kept')"))
    }), 60_000)

  it.live("an existing one is opened as it is, with the buffer pool set at start (also in one made before this setting)", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const cluster = join(dir, "pgdata")
      yield* Effect.scoped(Effect.gen(function*() {
        const wire = yield* open(cluster)
        yield* Effect.promise(() => wire.db.exec("CREATE TABLE t (v text); INSERT INTO t VALUES ('kept')"))
      }))
      const conf = join(cluster, "postgresql.conf")
      writeFileSync(conf, readFileSync(conf, "utf8").replace(/^shared_buffers = 16MB/m, "shared_buffers = 128MB"))
      const wire = yield* open(cluster)
      const rows = yield* Effect.promise(() => wire.db.query<{ v: string }>("SELECT v FROM t"))
      assert.deepStrictEqual(rows.rows, [{ v: "kept" }])
      assert.strictEqual(yield* setting(wire, "shared_buffers"), "16MB")
    }), 60_000)

  it.live("chamber serve's early start makes it while the server loads, and the opener takes it over", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      startCluster({ DATABASE_URL: "postgres://elsewhere/db", CHAMBER_DATA_DIR: join(dir, "unused") })
      startCluster({ CHAMBER_DATA_DIR: join(dir, "data") })
      assert.isFalse(existsSync(join(dir, "unused")), "nothing is made for PostgreSQL")
      const cluster = clusterDir(join(dir, "data"))
      assert.isTrue(existsSync(`${cluster}.initdb-${process.pid}`), "the child works in its scratch directory")
      const wire = yield* open(cluster)
      assert.strictEqual(yield* setting(wire, "shared_buffers"), "16MB")
      assert.deepStrictEqual(readdirSync(join(dir, "data")), ["pgdata"])
    }), 60_000)
})
