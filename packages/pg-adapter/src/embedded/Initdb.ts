/**
 * The child process that makes a new embedded cluster (see `Cluster.ts`): `node Initdb.ts <dir>`
 * runs initdb into `<dir>` with the product's settings, applies the product's migrations, stops
 * PostgreSQL and exits 0. The server then opens a database that is ready; the memory and the
 * compiled code all this took go with the child.
 */
import { PGlite } from "@electric-sql/pglite"
import { pgliteOptions } from "./Pglite.ts"
import { PgliteWire } from "./PgliteWire.ts"

const dir = process.argv[2]
if (dir === undefined) {
  process.stderr.write("usage: node Initdb.ts <data directory>\n")
  process.exit(2)
}
// The migrations' modules load while initdb runs.
const modules = Promise.all([import("effect"), import("../Database.ts")])
const db = new PGlite(dir, pgliteOptions())
await db.waitReady
const [{ Effect }, { embeddedClient, migrate }] = await modules
const wire = PgliteWire.over(db)
await Effect.runPromise(migrate.pipe(Effect.provide(embeddedClient({ owner: true, connect: () => wire.connect(), dataDir: dir }))))
await wire.close()
