/**
 * How the product opens PGlite: its settings, on a cluster made apart when new (`Cluster.ts`).
 *
 * - `shared_buffers` is 16 MB, not PostgreSQL's 128 MB: PGlite's buffer pool lives in its
 *   WebAssembly memory, all of it resident from the start, while the files behind it stay in the
 *   operating system's cache anyway. Durability does not change: PGlite writes every page and
 *   WAL record with write(2) before a commit returns, as before (it never calls fsync, whatever
 *   the settings).
 * - `plan_cache_mode` is `force_custom_plan`: prepared statements skip parsing, but each
 *   execution is planned for its values. PGlite runs no autovacuum, so nothing ever analyzes a
 *   table and invalidates a plan: a generic plan made while a table was small would be kept
 *   for the connection's life, however much the table grows (bench/README.md "Embedded
 *   database (PGlite)").
 */
import { PGlite, type PGliteOptions } from "@electric-sql/pglite"
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm"
import { placeCluster } from "./Cluster.ts"

export const SETTINGS: ReadonlyArray<string> = ["shared_buffers=16MB", "plan_cache_mode=force_custom_plan"]

export const pgliteOptions = (): PGliteOptions => ({
  // Name searches use a trigram index (migration 0011_large_tenants).
  extensions: { pg_trgm },
  startParams: [...PGlite.defaultStartParams, ...SETTINGS.flatMap((s) => ["-c", s])],
  // Also written into a new cluster's postgresql.conf, and used by initdb's own runs of PostgreSQL.
  initDbStartParams: SETTINGS.flatMap((s) => ["--set", s])
})

/** Opens PGlite on the cluster directory `dir` (made first when new; memory only when undefined). */
export const openPglite = async (dir: string | undefined): Promise<PGlite> => {
  if (dir !== undefined) await placeCluster(dir)
  const db = dir === undefined ? new PGlite(pgliteOptions()) : new PGlite(dir, pgliteOptions())
  await db.waitReady
  return db
}
