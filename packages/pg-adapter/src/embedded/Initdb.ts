/**
 * The child process that makes a new embedded cluster (see `Cluster.ts`): `node Initdb.ts <dir>`
 * runs initdb into `<dir>` with the product's settings, starts and stops PostgreSQL on it once,
 * and exits 0. Its memory goes with it.
 */
import { PGlite } from "@electric-sql/pglite"
import { pgliteOptions } from "./Pglite.ts"

const dir = process.argv[2]
if (dir === undefined) {
  process.stderr.write("usage: node Initdb.ts <data directory>\n")
  process.exit(2)
}
const db = new PGlite(dir, pgliteOptions())
await db.waitReady
await db.close()
