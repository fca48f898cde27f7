/**
 * `BENCH_ONLY=large pnpm bench` (bench/README.md "Large tenants"): chambers of BENCH_LARGE_SMALL and
 * BENCH_LARGE_BIG members, `chamber serve` answering one request at a time, the chambers in turn.
 */
import { join } from "node:path"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import { slugify } from "../packages/core/src/index.ts"
import { type DatabaseConfig, StorageLive } from "../packages/pg-adapter/src/index.ts"
import { serveChamber } from "./processes.ts"
import { memberInputs, seedChamber } from "./seed-data.ts"
import { f, machine, percentile, type SectionContext, verdict, withTempDir } from "./shared.ts"

const SMALL = Number(process.env.BENCH_LARGE_SMALL ?? 1_000)
const BIG = Number(process.env.BENCH_LARGE_BIG ?? 100_000)
/** Per case and size: at least this many measured requests, and more while the case's time lasts. */
const MIN_REQUESTS = Number(process.env.BENCH_LARGE_REQUESTS ?? 7)
const CASE_SECONDS = Number(process.env.BENCH_LARGE_SECONDS ?? 5)
const MAX_REQUESTS = 40
const WARMUP_ROUNDS = 3
const DATABASES = (process.env.BENCH_LARGE_DATABASES ?? "postgres,pglite").split(",").map((s) => s.trim())
const BAR = 2
const BATCH = 5_000

type Chamber = { readonly tenantId: number; readonly key: string }

/**
 * A case: one request for either chamber, its path after /api/v1/ without page, on page 1,
 * last_page - 1 or last_page / 2 (learnt from page 1); a promised one has a verdict of its own.
 */
type Case = { readonly name: string; readonly promised: boolean; readonly path: string; readonly at: "first" | "end" | "middle" }

/** A term of the big chamber's names that matches a handful of them (3 to 8), case-insensitively. */
const handfulTerm = (names: ReadonlyArray<string>) => {
  const lower = names.map((n) => n.toLowerCase())
  for (let i = names.length - 1; i >= 0; i--) {
    const term = names[i]!.replace(/\d{2}$/, "")
    let n = 0
    for (const name of lower) if (name.includes(term.toLowerCase()) && ++n > 8) break
    if (n >= 3 && n <= 8) return term
  }
  return names[names.length - 1]!
}

const cases = (handful: string): ReadonlyArray<Case> => [
  { name: "page 1", promised: true, path: "members?", at: "first" },
  { name: "page last_page - 1", promised: true, path: "members?", at: "end" },
  { name: "search name=bakery, page 1", promised: true, path: "members/search?name=bakery", at: "first" },
  { name: `search name=${JSON.stringify(handful)}`, promised: true, path: `members/search?name=${encodeURIComponent(handful)}`, at: "first" },
  { name: "search name=bakery, last_page - 1", promised: false, path: "members/search?name=bakery", at: "end" },
  { name: "page last_page / 2", promised: false, path: "members?", at: "middle" },
  { name: "sort=-name, last_page - 1", promised: false, path: "members?sort=-name", at: "end" },
  { name: "sort=created_at, last_page / 2", promised: false, path: "members?sort=created_at", at: "middle" },
  { name: "status=active, last_page - 1", promised: false, path: "members?status=active", at: "end" }
]

// Seeding: chambers and keys through the services, members by SQL in batches.

const insertMembers = (tenantId: number, count: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const inputs = memberInputs(count)
    const base = Date.UTC(2015, 0, 1)
    for (let from = 0; from < count; from += BATCH) {
      // Creation times that follow neither ids nor names: minutes apart, shuffled in blocks.
      const batch = inputs.slice(from, from + BATCH)
        .map((m, i) => ({ ...m, slug: slugify(m.name), created_at: new Date(base + (((from + i) * 7919) % count) * 60_000).toISOString() }))
      yield* sql`
        INSERT INTO members (tenant_id, name, slug, status, industry, secondary_industries, slogan, about, website, email, phone,
          address_line1, address_line2, city, state, zip, member_since, employee_count, directory_visible, custom_fields, created_at, updated_at)
        SELECT ${tenantId}, r.name, r.slug, r.status, r.industry, r.secondary_industries, r.slogan, r.about, r.website, r.email, r.phone,
          r.address_line1, r.address_line2, r.city, r.state, r.zip, r.member_since, r.employee_count, r.directory_visible,
          coalesce(r.custom_fields, '{}'::jsonb), r.created_at, r.created_at
        FROM jsonb_to_recordset(${JSON.stringify(batch)}::jsonb) AS r(name text, slug text, status text, industry text,
          secondary_industries jsonb, slogan text, about text, website text, email text, phone text, address_line1 text,
          address_line2 text, city text, state text, zip text, member_since date, employee_count integer,
          directory_visible boolean, custom_fields jsonb, created_at timestamptz)`
    }
    return inputs.map((m) => m.name)
  })

const makeChamber = (size: number) =>
  Effect.gen(function*() {
    const { tenantId, keys } = yield* seedChamber({ name: `Large bench chamber of ${size}`, fields: true, members: 0, keys: { read: ["Large bench", "read"] } })
    const names = yield* insertMembers(tenantId, size)
    return { chamber: { tenantId, key: keys.read } satisfies Chamber, names }
  })

// The server and the timing.

const get = async (base: string, path: string, key: string) => {
  const started = performance.now()
  const response = await fetch(base + path, { headers: { authorization: `Bearer ${key}` } })
  const body = await response.json() as { data: Array<unknown>; meta: { total: number; last_page: number } }
  if (response.status !== 200) throw new Error(`GET ${path}: ${response.status} ${JSON.stringify(body).slice(0, 300)}`)
  return { ms: performance.now() - started, body }
}

type Size = { readonly p50: number; readonly rows: number; readonly total: number; readonly n: number }
type Timed = { readonly name: string; readonly promised: boolean; readonly small: Size; readonly big: Size }

const url = (path: string, page: number) => `/api/v1/${path}${path.endsWith("?") ? "" : "&"}page=${page}`

/** The page a case asks of a chamber: 1, or last_page - 1 as page 1's meta says. */
const pageOf = async (base: string, c: Case, chamber: Chamber) => {
  if (c.at === "first") return 1
  const lastPage = (await get(base, url(c.path, 1), chamber.key)).body.meta.last_page
  return Math.max(1, c.at === "end" ? lastPage - 1 : Math.ceil(lastPage / 2))
}

/** Every case on one server, the two chambers alternately. */
const timeCases = async (base: string, chambers: readonly [Chamber, Chamber], list: ReadonlyArray<Case>, log: (line: string) => void) => {
  const out: Array<Timed> = []
  const pathsOf = await Promise.all(list.map((c) => Promise.all(chambers.map(async (chamber) => url(c.path, await pageOf(base, c, chamber))))))
  // Warm-up: every case a few times on both chambers (the server's code optimized, plans cached, pages in memory).
  for (let round = 0; round < WARMUP_ROUNDS; round++) {
    for (const paths of pathsOf) for (const [i, chamber] of chambers.entries()) await get(base, paths[i]!, chamber.key)
  }
  for (const [n, c] of list.entries()) {
    const samples: [Array<number>, Array<number>] = [[], []]
    const last: Array<{ rows: number; total: number }> = []
    const started = performance.now()
    while (samples[0].length < MAX_REQUESTS && (samples[0].length < MIN_REQUESTS || performance.now() - started < CASE_SECONDS * 1000)) {
      for (const [i, chamber] of chambers.entries()) {
        const { ms, body } = await get(base, pathsOf[n]![i]!, chamber.key)
        samples[i]!.push(ms)
        last[i] = { rows: body.data.length, total: body.meta.total }
      }
    }
    const [small, big] = samples.map((s, i) => ({ p50: percentile(s)(50), n: s.length, ...last[i]! })) as [Size, Size]
    out.push({ name: c.name, promised: c.promised, small, big })
    const ratio = big.p50 / small.p50
    log(`  ${c.name.padEnd(44)}${f(small.p50).padStart(9)}${f(big.p50).padStart(10)}${`${f(ratio, 2)}x`.padStart(8)}  ${ratio <= BAR ? "PASS" : "FAIL"}` +
      `${c.promised ? "       " : " (shown)"}  rows/total ${small.rows}/${small.total}, ${big.rows}/${big.total}; n ${small.n}`)
  }
  return out
}

const runOn = async (label: string, config: DatabaseConfig, serverEnv: Record<string, string>, ctx: SectionContext) => {
  const { log, elapsed } = ctx
  log(`\nlarge tenants on ${label}: seeding chambers of ${SMALL} and ${BIG} members`)
  const seeded = await Effect.runPromise(Effect.gen(function*() {
    const [small, big] = [yield* makeChamber(SMALL), yield* makeChamber(BIG)]
    yield* (yield* SqlClient.SqlClient)`VACUUM ANALYZE`
    return { small: small.chamber, big: big.chamber, names: big.names }
  }).pipe(Effect.provide(Layer.fresh(StorageLive(config))), Effect.orDie))
  const handful = handfulTerm(seeded.names)
  log(`[${elapsed()}] seeded (tenants ${seeded.small.tenantId} and ${seeded.big.tenantId}); the handful search term is ${JSON.stringify(handful)}`)

  // No relay, warnings only.
  return serveChamber(["--no-relay"], { ...serverEnv, LOG_LEVEL: "warn", NODE_ENV: "production" }, (server) => {
    log(`[${elapsed()}] chamber serve on ${server.base}; ${machine()}`)
    log(`  ${"case".padEnd(44)}${`${SMALL} ms`.padStart(9)}${`${BIG} ms`.padStart(10)}${"ratio".padStart(8)}`)
    return timeCases(server.base, [seeded.small, seeded.big], cases(handful), log)
  })
}

export const benchLarge = async (ctx: SectionContext): Promise<void> => {
  const { log } = ctx
  log(`\n=== large tenants: ${SMALL} and ${BIG} members, p50 of sequential requests over HTTP (bar: ${BIG} within ${BAR}x of ${SMALL}), ${machine()} ===`)
  const results: Array<readonly [string, ReadonlyArray<Timed>]> = []
  if (DATABASES.includes("postgres")) {
    results.push(["PostgreSQL", await runOn("PostgreSQL", { _tag: "Postgres", url: ctx.dbUrl, maxConnections: 4 }, { DATABASE_URL: ctx.dbUrl }, ctx)])
  }
  if (DATABASES.includes("pglite")) {
    const dataDir = (dir: string) => join(dir, "data")
    results.push(["embedded PGlite", await withTempDir("chamber-large-", (dir) =>
      runOn("embedded PGlite", { _tag: "Embedded", dataDir: dataDir(dir) }, { DATABASE_URL: "", CHAMBER_DATA_DIR: dataDir(dir) }, ctx))])
  }
  log("")
  for (const [label, timed] of results) {
    for (const t of timed.filter((t) => t.promised)) {
      const ratio = t.big.p50 / t.small.p50
      verdict(log, ratio <= BAR, `${label}, ${t.name}: ${f(t.big.p50)} ms at ${BIG} against ${f(t.small.p50)} ms at ${SMALL} = ${f(ratio, 2)}x (bar <= ${BAR}x)`)
    }
  }
}
