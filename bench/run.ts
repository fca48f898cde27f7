/**
 * `pnpm bench` (bench/README.md): on a fresh database, our HTTP server against the raw baseline,
 * both first checked to do the same work (answers, statements, outbox rows), then measured in
 * rounds taken in turn; then the sections BENCH_ONLY names (relay, changes, large, embedded,
 * fair). Exit code 1 only when the bench itself broke.
 */
import { randomBytes } from "node:crypto"
import { cpus } from "node:os"
import { deepStrictEqual } from "node:assert/strict"
import pg from "pg"
import { getLoad, inTurn, type Load, type Measured, printRows, type World } from "./load.ts"
import { children, type Server, startServer, stopChild } from "./processes.ts"
import { accessLogFile, CONNECTIONS, DURATION, f, machine, noAutovacuum, notePrinted, POOL_SIZE, ROUNDS, settleTables, verdict, WARMUP } from "./shared.ts"
import { invoiceBodies, memberBodies, paymentBodies, seedOn } from "./seed-data.ts"
import { describeUnits, startTracer, type Tracer, type Unit, units } from "./sql-trace.ts"
import { benchRelay } from "./relay.ts"
import { benchLarge } from "./large.ts"
import { benchEmbedded } from "./embedded.ts"
import { startOtlpSink } from "./otlp-sink.ts"
import { benchChanges } from "./changes.ts"
import { benchFair } from "./fair.ts"
import { benchImport } from "./import.ts"

const SERVER_URL = process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres"
const MEMBERS = Number(process.env.BENCH_MEMBERS ?? 1000)
const ONLY = (process.env.BENCH_ONLY ?? "").split(",").map((s) => s.trim()).filter((s) => s !== "")
const BAR = { throughput: 0.9, p99: 1.2, peakRss: 1.5, accessLog: 0.05, limiter: 0.05, metrics: 0.05, idempotencyKey: 0.1 }

const log = (line: string) => console.log(line)
const started = Date.now()
const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1)}s`
const progress = (line: string) => log(`[${elapsed()}] ${line}`)

// The database: a fresh one, dropped at the end whatever happens.
const dbName = `chamber_bench_${Date.now().toString(36)}_${randomBytes(3).toString("hex")}`
const dbUrl = Object.assign(new URL(SERVER_URL), { pathname: `/${dbName}` }).toString()

/** A connection to the server's own database, which creates and drops the bench's. */
const admin = new pg.Client({ connectionString: SERVER_URL })

let dbCreated = false
let tracer: Tracer | undefined
let db: pg.Client | undefined
let cleaning: Promise<void> | undefined
const cleanup = () =>
  (cleaning ??= (async () => {
    await Promise.all(children.map(stopChild))
    await tracer?.close()
    await db?.end().catch(() => {})
    if (dbCreated) {
      await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`)
        .then(() => log(`dropped database ${dbName}`), (e) => console.error(`could not drop database ${dbName}: ${e}`))
    }
    await admin.end().catch(() => {})
  })())

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => void (console.error(`\n${signal}: cleaning up`), cleanup().finally(() => process.exit(130))))
}

// Both servers do the same work: answers, statements and outbox rows compared.

/** A call's status and JSON, the statements it executed (by transaction) and the outbox rows it wrote. */
interface Answer {
  readonly status: number
  readonly json: any
  readonly sql: ReadonlyArray<Unit>
  readonly events: ReadonlyArray<{ readonly type: string; readonly payload: unknown }>
}

type Call = (method: "GET" | "POST", path: string, key: string, body?: unknown) => Promise<Answer>

interface Endpoint extends Load {
  /** The calls compared between the servers, made on one of them. */
  readonly probe: (world: World, call: Call) => Promise<ReadonlyArray<Answer>>
  /** Keys whose values differ between the servers by design. */
  readonly differs: ReadonlyArray<string>
}

class Disagreement extends Error {}

const JSON_HEADERS = { "content-type": "application/json" }

/**
 * Off the request path, whenever a server likes: the once-a-minute last_used_at touch, the pruning
 * of expired Idempotency-Keys, the in-process rate limiter's save each second.
 */
const offPath = (text: string) =>
  text.startsWith("UPDATE api_keys SET last_used_at") || text.startsWith("DELETE FROM idempotency_keys") || text.includes("rate_limit_windows")

let lastEvent = 0
const caller = (server: Server): Call => async (method, path, key, body) => {
  const sent = body === undefined ? {} : { headers: JSON_HEADERS, body: JSON.stringify(body) }
  const response = await fetch(server.base + path, { method, ...sent, headers: { authorization: `Bearer ${key}`, ...sent.headers } })
  const text = await response.text()
  const sql = units(tracer!.take(), offPath)
  const rows = (await db!.query("SELECT id, type, payload FROM outbox_events WHERE id > $1 ORDER BY id", [lastEvent])).rows
  if (rows.length > 0) lastEvent = Number(rows[rows.length - 1].id)
  const json = (() => {
    try {
      return JSON.parse(text)
    } catch {
      return text // compared as text
    }
  })()
  return { status: response.status, json, sql, events: rows.map((r) => ({ type: r.type, payload: r.payload })) }
}

/** Without the keys that differ by design (ids, numbers, times), and a slug without its -N. */
const normal = (value: unknown, differs: ReadonlyArray<string>) =>
  JSON.parse(JSON.stringify(value), (k, v) => (differs.includes(k) ? undefined : k === "slug" && typeof v === "string" ? v.replace(/-\d+$/, "") : v))

/** Nothing when `ours` and `baseline` are deeply equal; else a Disagreement with Node's diff of them. */
const alike = (label: string, what: string, ours: unknown, baseline: unknown) => {
  try {
    deepStrictEqual(ours, baseline)
  } catch (error) {
    throw new Disagreement(`${label}: the servers' ${what} differ (+ ours, - baseline):\n${(error as Error).message}`)
  }
}

const compare = (label: string, ours: Answer, baseline: Answer, differs: ReadonlyArray<string>) => {
  if (ours.status !== baseline.status || ours.status >= 300) {
    throw new Disagreement(`${label}: status ours ${ours.status}, baseline ${baseline.status}: ${JSON.stringify([ours.json, baseline.json]).slice(0, 600)}`)
  }
  alike(label, "answers", normal(ours.json, differs), normal(baseline.json, differs))
  alike(label, "outbox rows", normal(ours.events, differs), normal(baseline.events, differs))
  alike(label, "statements (in order, by transaction)", describeUnits(ours.sql), describeUnits(baseline.sql))
}

const statements = (answer: Answer) => answer.sql.reduce((n, u) => n + u.statements.length, 0)

// Endpoints.

const getEndpoint = (id: string, name: string, path: (world: World) => string): Endpoint => ({
  ...getLoad(id, name, path),
  probe: async (world, call) => [await call("GET", path(world), world.keys.read)],
  differs: []
})

const nextMember = memberBodies()
/** A POST /members request, its body the next client body; `headers` adds to the connection's. */
const memberPost = (headers: () => Record<string, string> = () => ({})) => ({
  method: "POST",
  path: "/api/v1/members",
  headers: JSON_HEADERS,
  setupRequest: (request: any) => ({ ...request, headers: { ...request.headers, ...headers() }, body: JSON.stringify(nextMember()) })
})

const membersPost: Endpoint = {
  id: "members-post", name: "POST /api/v1/members", key: "write", steps: ["POST /api/v1/members"],
  requests: () => [memberPost()],
  // One name twice on each server: the second create, and both of the other's, take a -N slug.
  probe: async (world, call) => {
    const body = { ...memberBodies(7)(), name: "Bench Verification Printing Co." }
    return [await call("POST", "/api/v1/members", world.keys.write, body), await call("POST", "/api/v1/members", world.keys.write, body)]
  },
  differs: ["id", "created_at", "updated_at"]
}

const nextInvoice = (() => {
  let next: ReturnType<typeof invoiceBodies> | undefined
  return (world: World) => (next ??= invoiceBodies(world.memberIds))()
})()
const nextPayment = paymentBodies()

type FlowContext = { invoice?: number | undefined; balance?: number | undefined }

const invoiceFlow: Endpoint = {
  id: "invoices",
  name: "invoice flow: POST /api/v1/invoices, POST .../{id}/issue, POST .../{id}/payments (whole balance)",
  key: "write",
  steps: ["POST /api/v1/invoices", "POST /api/v1/invoices/{id}/issue", "POST /api/v1/invoices/{id}/payments"],
  requests: (world) => [
    {
      method: "POST",
      path: "/api/v1/invoices",
      headers: JSON_HEADERS,
      setupRequest: (request: object) => ({ ...request, body: JSON.stringify(nextInvoice(world)) }),
      onResponse: (status: number, body: string, context: FlowContext) => {
        const data = status === 201 ? JSON.parse(body).data : undefined
        Object.assign(context, { invoice: data?.id, balance: data?.attributes.balance_cents })
      }
    },
    // A step whose invoice is missing (its create failed) is skipped: the connection starts a new flow.
    {
      method: "POST",
      setupRequest: (request: object, { invoice }: FlowContext) => invoice === undefined ? undefined : { ...request, path: `/api/v1/invoices/${invoice}/issue` },
      onResponse: (status: number, _body: string, context: FlowContext) => void (status !== 200 && (context.invoice = undefined))
    },
    {
      method: "POST",
      headers: JSON_HEADERS,
      setupRequest: (request: object, { invoice, balance }: FlowContext) =>
        invoice === undefined ? undefined : { ...request, path: `/api/v1/invoices/${invoice}/payments`, body: JSON.stringify(nextPayment(balance!)) }
    }
  ],
  probe: async (world, call) => {
    const lines = [{ description: "Annual membership dues (Gold)", unit: "900.00" }, { description: "Annual gala ticket", unit: "85.00", quantity: 2 }]
    const created = await call("POST", "/api/v1/invoices", world.keys.write, { member_id: world.memberIds[0], lines, memo: "Thank you." })
    const id = created.json?.data?.id
    const issued = await call("POST", `/api/v1/invoices/${id}/issue`, world.keys.write)
    const cents = Number(created.json?.data?.attributes?.balance_cents ?? 0)
    const payment = { method: "check", amount: (cents / 100).toFixed(2), received_on: "2026-11-20", reference: "Check #1042", notes: "At the desk." }
    return [created, issued, await call("POST", `/api/v1/invoices/${id}/payments`, world.keys.write, payment)]
  },
  differs: ["id", "number", "issued_at", "created_at", "updated_at"]
}

// The Idempotency-Key variants of POST /members: a fresh key each, and one key and body over and over (replays).
const RUN = randomBytes(4).toString("hex")
const REPLAYED_KEY = `bench-replayed-${RUN}`
const REPLAYED_BODY = JSON.stringify({ ...memberBodies(11)(), name: "Bench Replayed Bakery" })
let nextKey = 0
const IDEMPOTENCY_VARIANTS: ReadonlyArray<readonly [string, Load]> = [
  ["without key", { ...membersPost, id: "idempotency" }],
  ["with key", { ...membersPost, id: "idempotency", requests: () => [memberPost(() => ({ "idempotency-key": `bench-${RUN}-${++nextKey}` }))] }],
  ["replay", { ...membersPost, id: "idempotency", requests: () => [{ method: "POST", path: "/api/v1/members", headers: { ...JSON_HEADERS, "idempotency-key": REPLAYED_KEY }, body: REPLAYED_BODY }] }]
]

const ALL_ENDPOINTS: ReadonlyArray<Endpoint> = [
  getEndpoint("members", "GET /api/v1/members (page 1)", () => "/api/v1/members?page=1"),
  getEndpoint("me", "GET /api/v1/me", () => "/api/v1/me"),
  getEndpoint("member", "GET /api/v1/members/{id}", (world) => `/api/v1/members/${world.memberIds[world.memberIds.length >> 1]}`),
  membersPost,
  invoiceFlow
]
const MEMBERS_PAGE = ALL_ENDPOINTS[0]!
/** The endpoints measured also on ours with metrics on and with OTLP export. */
const OBSERVED_ENDPOINTS = ["members", "me"]
const OBSERVED_SERVERS = ["ours-metrics", "ours-otlp"]
const ENDPOINTS = ALL_ENDPOINTS.filter((e) => ONLY.length === 0 || ONLY.includes(e.id))
const runs = (section: string) => ONLY.length === 0 || ONLY.includes(section)
const KNOWN = [...ALL_ENDPOINTS.map((e) => e.id), "idempotency", "relay", "changes", "large", "embedded", "fair", "import"]
if (ONLY.some((id) => !KNOWN.includes(id))) {
  console.error(`BENCH_ONLY: unknown section ${ONLY.filter((id) => !KNOWN.includes(id)).join(", ")}; known: ${KNOWN.join(", ")}`)
  process.exit(2)
}

/** The tables the measured writes grow. */
const WRITTEN_TABLES = ["members", "outbox_events", "invoices", "invoice_lines", "invoice_sequences", "payments", "api_keys", "idempotency_keys"]

/** Before a round of a write endpoint, outside the measured window. */
const settle = () => settleTables(db!, WRITTEN_TABLES)

// Report.

type Rows = ReadonlyArray<readonly [string, Measured]>

const ratios = (unit: string, a: Measured, b: Measured) =>
  `throughput ${f(a.rps / b.rps, 2)}x, p50 ${f(a.p50 / b.p50, 2)}x, p99 ${f(a.p99 / b.p99, 2)}x, CPU/${unit} ${f(a.cpuMs / b.cpuMs, 2)}x (main thread ${f(a.mainMs / b.mainMs, 2)}x), peak RSS ${f(a.peakRssMb / b.peakRssMb, 2)}x`

const printTable = (endpoint: Endpoint, rows: Rows) => {
  const unit = endpoint.steps.length > 1 ? "flow" : "req"
  printRows(log, endpoint.name, "server", unit, rows)
  const get = (name: string) => rows.find(([n]) => n === name)?.[1]
  for (const other of ["baseline", "ours-nolog", "ours-nolimit", "ours-metrics", "ours-otlp"]) {
    const b = get(other)
    if (b !== undefined) log(`  ours/${other}: ${ratios(unit, get("ours")!, b)}`)
  }
}

const verdicts = (results: ReadonlyArray<{ readonly endpoint: Endpoint; readonly rows: Rows }>) => {
  log("")
  for (const { endpoint, rows } of results) {
    const get = (name: string) => rows.find(([n]) => n === name)?.[1]
    const [ours, baseline] = [get("ours")!, get("baseline")!]
    const clean = rows.every(([, m]) => m.bad === 0)
    const label = endpoint.steps.length > 1 ? "invoice flow" : endpoint.name
    const [throughput, p99, rss] = [ours.rps / baseline.rps, ours.p99 / baseline.p99, ours.peakRssMb / baseline.peakRssMb]
    if (endpoint === MEMBERS_PAGE) {
      verdict(log, throughput >= BAR.throughput && p99 <= BAR.p99 && rss <= BAR.peakRss, `members page against the baseline: throughput ${f(throughput, 2)}x ` +
        `(bar >= ${BAR.throughput}x), p99 ${f(p99, 2)}x (bar <= ${BAR.p99}x), peak RSS ${f(rss, 2)}x (bar <= ${BAR.peakRss}x)`, clean)
      for (const [name, what, bar] of [["ours-nolog", "the access log", BAR.accessLog], ["ours-nolimit", "the in-process rate limiter", BAR.limiter]] as const) {
        const cost = 1 - ours.rps / get(name)!.rps
        verdict(log, cost <= bar, `${what} costs ${f(cost * 100)}% of the members page's throughput (bar <= ${bar * 100}%)`, clean)
      }
    }
    // Metrics (CHAMBER_METRICS_PORT) against ours without them (docs/operations.md "Metrics"); OTLP export at
    // ratio 1 has no bar: its cost is printed, to be compared between runs.
    const [metrics, otlp] = [get("ours-metrics"), get("ours-otlp")]
    const costOf = (m: Measured) => `${f((1 - m.rps / ours.rps) * 100)}% of ${label}'s throughput`
    if (metrics !== undefined) {
      verdict(log, 1 - metrics.rps / ours.rps <= BAR.metrics, `metrics on costs ${costOf(metrics)} (bar <= ${BAR.metrics * 100}%); p99 ${f(metrics.p99 / ours.p99, 2)}x`, clean)
    }
    if (otlp !== undefined) log(`cost: OTLP export (traces at ratio 1) costs ${costOf(otlp)}; p99 ${f(otlp.p99 / ours.p99, 2)}x`)
    if (endpoint !== MEMBERS_PAGE) {
      log(`ratio: ${label} against the baseline: throughput ${f(throughput, 2)}x, p99 ${f(p99, 2)}x, CPU ${f(ours.cpuMs / baseline.cpuMs, 2)}x`)
    }
  }
}

/**
 * Idempotency-Key, ours against ours in the same rounds: POST /members without a key, with a
 * fresh key each, and replayed. Bars: a key costs at most 10% of the throughput and of the CPU per
 * request; a replay costs less CPU and answers more requests a second than the create it replays.
 */
const benchIdempotency = async (ours: Server, world: World) => {
  const headers = { authorization: `Bearer ${world.keys.write}`, ...JSON_HEADERS, "idempotency-key": REPLAYED_KEY }
  const post = () => fetch(`${ours.base}/api/v1/members`, { method: "POST", headers, body: REPLAYED_BODY })
    .then(async (r) => ({ status: r.status, text: await r.text(), replayed: r.headers.get("idempotent-replayed") }))
  const [first, again] = [await post(), await post()]
  if (first.status !== 201 || again.status !== 201 || again.text !== first.text || again.replayed !== "true" || first.replayed !== null) {
    throw new Disagreement(`Idempotency-Key: the replay is not the first answer: ${JSON.stringify([first, again]).slice(0, 600)}`)
  }
  log("  POST /api/v1/members replayed: the replay is the first answer, byte for byte, marked replayed")
  const rows = await inTurn(IDEMPOTENCY_VARIANTS.map(([label, load]) => [ours, load, label] as const), world, DURATION, progress, settle)
  const [without, withKey, replay] = rows.map(([, m]) => m) as [Measured, Measured, Measured]
  return () => {
    printRows(log, "POST /api/v1/members on ours: without an Idempotency-Key, with a fresh one each, replayed", "variant", "req", rows)
    const clean = rows.every(([, m]) => m.bad === 0)
    const [throughputCost, cpuCost] = [1 - withKey.rps / without.rps, withKey.cpuMs / without.cpuMs - 1]
    verdict(log, throughputCost <= BAR.idempotencyKey && cpuCost <= BAR.idempotencyKey, `an Idempotency-Key costs POST /members ${f(throughputCost * 100)}% ` +
      `of its throughput and ${f(cpuCost * 100)}% more CPU a request (bar <= ${BAR.idempotencyKey * 100}% each)`, clean)
    verdict(log, replay.cpuMs < withKey.cpuMs && replay.rps > withKey.rps, `a replay against the create it replays: CPU a request ` +
      `${f(replay.cpuMs / withKey.cpuMs, 2)}x, throughput ${f(replay.rps / withKey.rps, 2)}x (bar: less CPU, more throughput)`, clean)
  }
}

/** The HTTP endpoints: seed, compare, measure, report. */
const benchHttp = async (db: pg.Client) => {
  log(`bench: ${MEMBERS} members, ${CONNECTIONS} connections, warm-up ${WARMUP} s + ${DURATION} s measured per server and endpoint in ${ROUNDS} rounds, DB pool ${POOL_SIZE} each`)
  const { keys } = await seedOn(dbUrl, {
    name: "Greater Riverside Chamber of Commerce", fields: true, members: MEMBERS,
    keys: { read: ["Website directory", "read"], write: ["Back office", "members:write,invoices:write,payments:write"] }
  })
  // Statistics and the visibility map fresh, so that no autovacuum mid-run changes a plan; the
  // written tables are settled before each round instead (settle).
  await db.query("VACUUM ANALYZE")
  await noAutovacuum(db, WRITTEN_TABLES)
  const world: World = { keys, memberIds: (await db.query("SELECT id FROM members ORDER BY id")).rows.map((r) => Number(r.id)) }
  lastEvent = Number((await db.query("SELECT coalesce(max(id), 0) AS id FROM outbox_events")).rows[0].id)
  progress("seeded")

  tracer = await startTracer(dbUrl)
  const traced = await Promise.all([startServer("ours", "our-server.ts", tracer.url), startServer("baseline", "baseline-server.ts", tracer.url)])
  tracer.take()
  log("both servers through a tracing proxy, each measured call compared:")
  const [ours, baseline] = traced.map(caller) as [Call, Call]
  for (const endpoint of ENDPOINTS) {
    const [a, b] = [await endpoint.probe(world, ours), await endpoint.probe(world, baseline)]
    a.forEach((answer, i) => compare(`${endpoint.name}, call ${i + 1}`, answer, b[i]!, endpoint.differs))
    log(`  ${endpoint.name}: ${a.length} call(s) alike: answers, outbox rows, statements (${a.map(statements).join(" + ")})`)
  }
  await Promise.all(traced.map((s) => stopChild(s.child)))
  await tracer.close()
  tracer = undefined

  // Ours as shipped: the in-process rate limiter and the access log (one JSON line a request to a file);
  // again with metrics on, and with OTLP export (every request traced) to a collector in this process.
  const logged = { BENCH_ACCESS_LOG: accessLogFile(dbName) }
  const ourServer = (name: string, env: Record<string, string>) => startServer(name, "our-server.ts", dbUrl, env)
  const page = ENDPOINTS.includes(MEMBERS_PAGE)
  const collector = ENDPOINTS.some((e) => OBSERVED_ENDPOINTS.includes(e.id)) ? await startOtlpSink() : undefined
  const servers = await Promise.all([
    ourServer("ours", logged),
    ...(collector === undefined ? [] : [
      ourServer("ours-metrics", { ...logged, CHAMBER_METRICS_PORT: "0" }),
      ourServer("ours-otlp", { ...logged, OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_TRACES_SAMPLER_ARG: "1" })
    ]),
    startServer("baseline", "baseline-server.ts", dbUrl),
    ...(page ? [ourServer("ours-nolog", {}), ourServer("ours-nolimit", { ...logged, BENCH_RATE_LIMITS: "off" })] : [])
  ])
  progress(`servers up: ${servers.map((s) => `${s.name} (pid ${s.child.pid})`).join(", ")}; ${machine()}`)

  const results: Array<{ endpoint: Endpoint; rows: Rows }> = []
  for (const endpoint of ENDPOINTS) {
    const observed = (s: Server) => OBSERVED_ENDPOINTS.includes(endpoint.id) && OBSERVED_SERVERS.includes(s.name)
    const measured = servers.filter((s) => endpoint === MEMBERS_PAGE || !s.name.startsWith("ours-") || observed(s))
    const writes = endpoint.steps.some((step) => step.startsWith("POST"))
    results.push({ endpoint, rows: await inTurn(measured.map((server) => [server, endpoint] as const), world, DURATION, progress, writes ? settle : undefined) })
  }
  if (runs("idempotency")) progress("idempotency: ours without and with an Idempotency-Key, and replayed")
  const idempotency = runs("idempotency") ? await benchIdempotency(servers[0]!, world) : undefined
  await Promise.all(servers.map((server) => stopChild(server.child)))
  if (collector !== undefined) {
    progress(`the OTLP collector received ${collector.posts()} exports, ${f(collector.bytes() / 1e6)} MB`)
    await collector.close()
  }

  log(`\n=== ${CONNECTIONS} connections, ${DURATION} s measured per server in ${ROUNDS} rounds taken in turn; ${cpus().length} CPUs shared by load, servers and PostgreSQL ===`)
  log("units/s: requests (flows) whose responses were all 2xx; p50/p99 over every one; CPU: the server's user+sys over them; peak RSS: sampled every 100 ms")
  for (const r of results) printTable(r.endpoint, r.rows)
  verdicts(results)
  idempotency?.()
  for (const server of servers) notePrinted(log, `${server.name} (${server.output.lines} lines; e.g. requests cut off as autocannon closes its connections)`, server.output.first)
}

const main = async () => {
  await admin.connect()
  const version = (await admin.query("SHOW server_version")).rows[0].server_version as string
  await admin.query(`CREATE DATABASE ${dbName}`)
  dbCreated = true
  log(`bench: node ${process.version}, ${cpus().length} CPUs, PostgreSQL ${version}, database ${dbName}`)
  db = new pg.Client({ connectionString: dbUrl })
  await db.connect()
  const ctx = { dbUrl, db, log, elapsed }
  if (ENDPOINTS.length > 0 || runs("idempotency")) await benchHttp(db)
  if (runs("relay")) await benchRelay(ctx)
  if (runs("changes")) await benchChanges(ctx)
  if (ONLY.includes("large")) await benchLarge(ctx)
  if (ONLY.includes("embedded")) await benchEmbedded(ctx)
  if (ONLY.includes("fair")) await benchFair(ctx)
  if (ONLY.includes("import")) await benchImport(ctx)
}

try {
  await main()
} catch (error) {
  console.error(`\nbench: ${error instanceof Disagreement ? error.message : error instanceof Error ? error.stack ?? error.message : error}`)
  process.exitCode = 1
} finally {
  await cleanup()
  log(`[${elapsed()}] done`)
}
