/**
 * A new embedded data directory (a PostgreSQL cluster) is made by a child process (`Initdb.ts`)
 * in a scratch directory beside it, `pgdata.initdb-<pid>`, and renamed into place by the process
 * that owns the data directory. initdb runs PostgreSQL's bootstrap in a PGlite of its own: done
 * in the server, the memory it takes stays with the server afterwards. A crash halfway leaves a
 * scratch directory, removed at the next start, never a half-made database.
 *
 * `chamber serve` starts the child before loading its own modules (`startCluster`), so that
 * both go on at once; whoever opens the database later takes that child's result.
 *
 * This module loads neither PGlite nor Effect: it is imported before them.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

/** The embedded database's directory when CHAMBER_DATA_DIR is unset. */
export const DEFAULT_DATA_DIR = ".chamber/data"

/** Where the embedded database under a data directory keeps its files. */
export const clusterDir = (dataDir: string) => path.join(path.resolve(dataDir), "pgdata")

const INITDB = fileURLToPath(new URL("./Initdb.ts", import.meta.url))
const SCRATCH = ".initdb-"

/** Clusters being made by this process, by their final directory: the scratch directory once done. */
const making = new Map<string, Promise<string>>()

/** True when `dir` does not exist or holds nothing. */
export const absentOrEmpty = (dir: string) => !fs.existsSync(dir) || fs.readdirSync(dir).length === 0

/** Whether process `pid` is running (one of another user's counts). */
export const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM"
  }
}

/** Removes the scratch directories of processes that are gone. */
const removeLeftovers = (cluster: string) => {
  const parent = path.dirname(cluster)
  const prefix = path.basename(cluster) + SCRATCH
  if (!fs.existsSync(parent)) return
  for (const name of fs.readdirSync(parent)) {
    const pid = Number(name.slice(prefix.length))
    if (name.startsWith(prefix) && Number.isInteger(pid) && pid !== process.pid && !alive(pid)) {
      fs.rmSync(path.join(parent, name), { recursive: true, force: true })
    }
  }
}

const runInitdb = async (cluster: string): Promise<string> => {
  removeLeftovers(cluster)
  const scratch = cluster + SCRATCH + process.pid
  fs.rmSync(scratch, { recursive: true, force: true })
  fs.mkdirSync(scratch, { recursive: true })
  const child = spawn(process.execPath, [INITDB, scratch], { stdio: ["ignore", "ignore", "pipe"] })
  const stop = () => child.kill()
  process.once("exit", stop)
  let stderr = ""
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
  try {
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once("error", reject)
      child.once("close", resolve)
    })
    if (code !== 0) throw new Error(`initdb exited ${code}: ${stderr.trim().slice(-2000)}`)
    return scratch
  } catch (error) {
    fs.rmSync(scratch, { recursive: true, force: true })
    throw new Error(`creating the embedded database at ${cluster} failed: ${error instanceof Error ? error.message : String(error)}`)
  } finally {
    process.off("exit", stop)
  }
}

/** Starts making the cluster for `cluster` (a `pgdata` directory) unless it exists or is on its way. */
const start = (cluster: string): Promise<string> => {
  let made = making.get(cluster)
  if (made === undefined) {
    made = runInitdb(cluster)
    // Taken (and its failure reported) by `placeCluster`; until then no unhandled rejection.
    made.catch(() => {})
    making.set(cluster, made)
  }
  return made
}

/**
 * For `chamber serve`, before its modules load: when the environment names an embedded database
 * that does not exist yet, starts making it.
 */
export const startCluster = (env: Record<string, string | undefined>): void => {
  if (env.DATABASE_URL !== undefined && env.DATABASE_URL !== "") return
  const cluster = clusterDir(env.CHAMBER_DATA_DIR || DEFAULT_DATA_DIR)
  if (absentOrEmpty(cluster)) void start(cluster)
}

/**
 * Makes sure `cluster` holds a database: when it is absent or empty, takes the cluster started
 * for it (or makes one now) and renames it into place. Only the owner of the data directory may.
 */
export const placeCluster = async (cluster: string): Promise<void> => {
  if (!absentOrEmpty(cluster)) return
  try {
    const scratch = await start(cluster)
    if (fs.existsSync(cluster)) fs.rmdirSync(cluster)
    fs.renameSync(scratch, cluster)
  } finally {
    making.delete(cluster)
  }
}
