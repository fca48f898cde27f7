/**
 * `node bench/import-members.ts [N]`: times `chamber import` of N members (default 10,000) into a
 * fresh embedded PGlite database, as an operator runs it (docs/cli.md "Import"). Issue bar: 10,000
 * members in under a minute.
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { chamberArgs } from "./shared.ts"

const count = Number(process.argv[2] ?? 10_000)
const dir = mkdtempSync(join(tmpdir(), "chamber-import-bench-"))
const env = { ...process.env, CHAMBER_DATA_DIR: join(dir, "data"), DATABASE_URL: "", NO_COLOR: "1" }
const chamber = (...args: Array<string>) => execFileSync(process.execPath, chamberArgs(...args), { env, encoding: "utf8" })

try {
  const tenant = JSON.parse(chamber("tenant", "create", "--name", "Import Bench", "--json")) as { id: string }
  const members = Array.from({ length: count }, (_, i) => ({
    ref: `m${i}`,
    name: `Member ${i} Hardware, LLC`,
    status: i % 7 === 0 ? "pending" : "active",
    email: `hello@member${i}.example`,
    phone: `555-${String(i % 10_000).padStart(4, "0")}`,
    city: "Riverside",
    custom_fields: { tier: i % 3 === 0 ? "Gold" : "Silver" }
  }))
  const file = join(dir, "members.json")
  writeFileSync(file, JSON.stringify({ members }))
  const started = process.hrtime.bigint()
  const result = JSON.parse(chamber("import", "--tenant", tenant.id, file, "--json")) as { counts: { members: number } }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9
  console.log(`import: ${result.counts.members} members into embedded PGlite in ${seconds.toFixed(1)} s (${Math.round(result.counts.members / seconds)} a second), one transaction`)
  console.log(seconds < 60 || count !== 10_000 ? "PASS" : "FAIL: over a minute")
} finally {
  rmSync(dir, { recursive: true, force: true })
}
