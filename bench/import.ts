/**
 * `BENCH_ONLY=import pnpm bench`: `chamber import` of BENCH_IMPORT_MEMBERS members (100,000) and
 * half as many contacts (each of every second member), the whole command from start to exit, on
 * PostgreSQL and on the embedded database (no server running), beside `COPY` of the same member and
 * contact rows into the same tables of the same database (server-side COPY on PostgreSQL, COPY
 * from a blob in PGlite). Bars (issue 45): 20 s on PostgreSQL, 60 s embedded, peak RSS < 1 GB.
 */
import { execFileSync, spawnSync } from "node:child_process"
import { chmodSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import type pg from "pg"
import { clusterDir } from "../packages/pg-adapter/src/embedded/Cluster.ts"
import { openPglite } from "../packages/pg-adapter/src/embedded/Pglite.ts"
import { chamberArgs, f, machine, type SectionContext, withTempDir } from "./shared.ts"

const MEMBERS = Number(process.env.BENCH_IMPORT_MEMBERS ?? 100_000)
const CONTACTS = Math.floor(MEMBERS / 2)

const member = (i: number) => ({
  ref: `m${i}`,
  name: `Member ${i} Hardware, LLC`,
  status: i % 7 === 0 ? "pending" : "active",
  email: `hello@member${i}.example`,
  phone: `555-${String(i % 10_000).padStart(4, "0")}`,
  city: "Riverside",
  custom_fields: { tier: i % 3 === 0 ? "Gold" : "Silver" }
})
const contact = (i: number) => ({ ref: `c${i}`, first_name: "Ann", last_name: `Lee ${i}`, email: `ann${i}@member${i * 2}.example`, member_ref: `m${i * 2}` })

const csvCell = (v: unknown) => (typeof v === "string" && !/[",\n]/.test(v) ? v : `"${(typeof v === "string" ? v : JSON.stringify(v)).replace(/"/g, '""')}"`)
/** The same rows as CSV for COPY: the member's slug as the import makes it, contacts without their member (ids not known). */
const copyFiles = (dir: string, tenant: number) => {
  const members = Array.from({ length: MEMBERS }, (_, i) => {
    const m = member(i)
    return [tenant, m.name, `member-${i}-hardware-llc`, m.status, m.email, m.phone, m.city, m.custom_fields].map(csvCell).join(",")
  })
  const contacts = Array.from({ length: CONTACTS }, (_, i) => [tenant, "Ann", `Lee ${i}`, contact(i).email].map(csvCell).join(","))
  writeFileSync(join(dir, "members.csv"), members.join("\n") + "\n")
  writeFileSync(join(dir, "contacts.csv"), contacts.join("\n") + "\n")
}
const COPY_MEMBERS = "COPY members (tenant_id, name, slug, status, email, phone, city, custom_fields) FROM"
const COPY_CONTACTS = "COPY contacts (tenant_id, first_name, last_name, email) FROM"

/** Copies the CSV files into the chamber `publicId`'s tables: the seconds the two COPYs took. */
type Copy = (dir: string, publicId: string) => Promise<number>
type Query = (text: string, params?: Array<unknown>) => Promise<{ rows: Array<any> }>

/** The chamber's id, then the two COPYs by `copy` (the statement up to FROM, the file): their seconds. */
const copyRows = async (dir: string, publicId: string, query: Query, copy: (statement: string, file: string) => Promise<unknown>) => {
  copyFiles(dir, Number((await query("SELECT id FROM tenants WHERE public_id = $1", [publicId])).rows[0].id))
  const started = performance.now()
  await copy(COPY_MEMBERS, "members.csv")
  await copy(COPY_CONTACTS, "contacts.csv")
  return (performance.now() - started) / 1000
}

const copyPostgres = (db: pg.Client): Copy => (dir, publicId) =>
  copyRows(dir, publicId, (text, params) => db.query(text, params), (statement, file) => db.query(`${statement} '${join(dir, file)}' (FORMAT csv)`))

const copyEmbedded = (dataDir: string): Copy => async (dir, publicId) => {
  const db = await openPglite(clusterDir(dataDir))
  return copyRows(dir, publicId, (text, params) => db.query(text, params), (statement, file) =>
    db.query(`${statement} '/dev/blob' (FORMAT csv)`, [], { blob: new Blob([readFileSync(join(dir, file))]) })).finally(() => db.close())
}

const runOn = async (name: string, env: NodeJS.ProcessEnv, copy: Copy, bar: number, dir: string, ctx: SectionContext) => {
  const tenant = (n: string) =>
    (JSON.parse(execFileSync(process.execPath, chamberArgs("tenant", "create", "--name", `Import Bench ${n}`, "--json"), { env, encoding: "utf8" })) as { id: string }).id
  const [into, copied] = [tenant("import"), tenant("copy")]
  ctx.log(`[${ctx.elapsed()}] import on ${name}: ${MEMBERS} members, ${CONTACTS} contacts; ${machine()}`)
  // The whole command, start to exit; GNU time's %M is the peak RSS in KB.
  const timed = spawnSync("/usr/bin/time", ["-f", "BENCH_TIME %e %M", process.execPath, ...chamberArgs("import", "--tenant", into, join(dir, "doc.json"), "--json")], {
    env,
    encoding: "utf8",
    maxBuffer: 256 * 1024 * 1024
  })
  const measured = /BENCH_TIME (\S+) (\d+)/.exec(timed.stderr)
  if (timed.status !== 0 || measured === null) throw new Error(`chamber import on ${name} failed: ${timed.stderr.slice(-2000)}`)
  const counts = (JSON.parse(timed.stdout) as { counts: { members: number; contacts: number } }).counts
  if (counts.members !== MEMBERS || counts.contacts !== CONTACTS) throw new Error(`chamber import on ${name} wrote ${JSON.stringify(counts)}`)
  const copySeconds = await copy(dir, copied)
  return { name, seconds: Number(measured[1]), peakRssMb: Number(measured[2]) / 1024, copySeconds, bar }
}

export const benchImport = (ctx: SectionContext) =>
  withTempDir("chamber-import-bench-", async (dir) => {
    chmodSync(dir, 0o755) // the PostgreSQL server's own user reads the COPY files
    writeFileSync(join(dir, "doc.json"), JSON.stringify({ members: Array.from({ length: MEMBERS }, (_, i) => member(i)), contacts: Array.from({ length: CONTACTS }, (_, i) => contact(i)) }))
    const dataDir = join(dir, "data")
    const runs = [
      await runOn("PostgreSQL", { ...process.env, DATABASE_URL: ctx.dbUrl, NO_COLOR: "1" }, copyPostgres(ctx.db), 20, dir, ctx),
      await runOn("embedded", { ...process.env, DATABASE_URL: "", CHAMBER_DATA_DIR: dataDir, NO_COLOR: "1" }, copyEmbedded(dataDir), 60, dir, ctx)
    ]
    ctx.log(`\n=== chamber import of ${MEMBERS} members and ${CONTACTS} contacts, start to exit, beside COPY of the same rows ===`)
    for (const r of runs) {
      const pass = r.seconds <= r.bar && r.peakRssMb < 1024
      ctx.log(`${r.name.padEnd(10)} import ${f(r.seconds)} s (${Math.round((MEMBERS + CONTACTS) / r.seconds)} records/s), peak RSS ${f(r.peakRssMb, 0)} MB;` +
        ` COPY ${f(r.copySeconds, 2)} s; ratio ${f(r.seconds / r.copySeconds)}x  ${pass ? "PASS" : "FAIL"} (bar ${r.bar} s, RSS < 1 GB)`)
    }
  })
