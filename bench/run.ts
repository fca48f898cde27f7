/**
 * `pnpm bench`: our HTTP server against a minimal node:http + pg baseline, and our webhook relay
 * against a minimal claim-and-POST loop (relay.ts), on PostgreSQL.
 *
 * 1. creates a fresh database `chamber_bench_<random>` on DATABASE_URL's server (dropped at the end);
 * 2. seeds one chamber through the core services: custom field definitions, BENCH_MEMBERS members
 *    with varied fields, a read key and a write key;
 * 3. checks that both servers answer the same and run the same SQL: ours and the baseline, started
 *    once through a tracing PostgreSQL proxy (sql-trace.ts), answer each measured request with the
 *    same JSON, execute the same statements in the same transactions and write the same outbox
 *    rows; it stops if not;
 * 4. starts the measured servers as child processes (so each one's RSS is its own), same DB pool
 *    size: ours (rate limits counted in-process, as `chamber serve` without REDIS_URL), ours with
 *    the access log on (for the GET endpoints), the baseline; for the members page also ours
 *    without a rate limiter and ours counting in Redis (REDIS_URL, default 127.0.0.1:6379);
 * 5. per endpoint: a warm-up of each, then BENCH_DURATION seconds of measurement each, cut into
 *    BENCH_ROUNDS rounds run alternately (ours, baseline, ours, baseline...) so both see the same
 *    machine conditions; autocannon at BENCH_CONNECTIONS connections; before each round of a write
 *    endpoint the database is settled (vacuum, analyze, checkpoint) outside the measured window;
 * 6. prints req/s (flows/s for the invoice flow), p50/p99 latency (over every response of every
 *    round), server CPU per request, peak RSS, the ratios ours/baseline and the PASS/FAIL verdicts
 *    (members page: throughput >= 0.5x baseline and p99 <= 1.5x; the rate limiter costs <= 5% of
 *    its throughput in-process and <= 15% on Redis against ours without it; POST /members and
 *    the invoice flow: throughput >= 0.6x). Exits 0 either way; 1 only if the bench itself broke
 *    (e.g. the servers disagree);
 * 7. then, on the same database, the webhook relay (relay.ts): two `chamber relay` processes and
 *    two of the baseline loop in alternating rounds, deliveries/s of a committed burst and
 *    commit-to-receipt p50/p99 at a steady rate, every delivery checked; verdict: >= 2,000
 *    deliveries/s and p50 <= 50 ms.
 *
 * Knobs (env): DATABASE_URL, BENCH_MEMBERS (1000), BENCH_CONNECTIONS (32), BENCH_DURATION (10 s),
 * BENCH_ROUNDS (2), BENCH_WARMUP (4 s), BENCH_POOL_SIZE (10), BENCH_ONLY=members,me,members-post,
 * invoices,relay (a comma-separated selection); the relay's own BENCH_RELAY_* knobs are in
 * relay.ts and bench/README.md.
 */
import type { ChildProcess } from "node:child_process"
import { randomBytes } from "node:crypto"
import { readFileSync } from "node:fs"
import { cpus } from "node:os"
import { isDeepStrictEqual } from "node:util"
import { fileURLToPath } from "node:url"
import autocannon from "autocannon"
import * as Effect from "effect/Effect"
import pg from "pg"
import { Keys, Members, Tenants } from "../packages/core/src/index.ts"
import { StorageLive } from "../packages/pg-adapter/src/index.ts"
import { children, collectLines, cpuSeconds, newOutput, type Output, procStatus, spawnNode, stopChild } from "./processes.ts"
import { accessLogFile, CHAMBER_NODE_FLAGS, KEEP_ACCESS_LOG, LISTENING, POOL_SIZE } from "./shared.ts"
import { invoiceBodies, memberBodies, memberInputs, paymentBodies } from "./seed-data.ts"
import { describeUnits, startTracer, type Tracer, type Unit, units } from "./sql-trace.ts"
import { benchRelay } from "./relay.ts"
import { benchLarge } from "./large.ts"
import { benchEmbedded } from "./embedded.ts"

const SERVER_URL = process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres"
const MEMBERS = Number(process.env.BENCH_MEMBERS ?? 1000)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32)
const DURATION = Number(process.env.BENCH_DURATION ?? 10)
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 2))
const WARMUP = Number(process.env.BENCH_WARMUP ?? 4)
const ONLY = (process.env.BENCH_ONLY ?? "").split(",").map((s) => s.trim()).filter((s) => s !== "")
/** Issue 12's bars (against the baseline) and issue 10's (the limiter against none), "Verdicts" in README.md. */
const BAR = { throughput: 0.9, p99: 1.2, peakRss: 1.5, single: 0.8, accessLogCost: 0.05, writes: 0.8, limiterInProcess: 0.05, limiterRedis: 0.15 }
const REDIS_URL = process.env.REDIS_URL || "redis://127.0.0.1:6379"

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url))
const log = (line: string) => console.log(line)
const started = Date.now()
const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1)}s`

// ---------------------------------------------------------------------------------------------
// Database: a fresh one, dropped at the end whatever happens.

const dbName = `chamber_bench_${Date.now().toString(36)}_${randomBytes(3).toString("hex")}`
const dbUrl = (() => {
  const u = new URL(SERVER_URL)
  u.pathname = `/${dbName}`
  return u.toString()
})()

const admin = async <A>(f: (client: pg.Client) => Promise<A>): Promise<A> => {
  const client = new pg.Client({ connectionString: SERVER_URL })
  await client.connect()
  try {
    return await f(client)
  } finally {
    await client.end()
  }
}

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
      await admin((c) => c.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`)).then(
        () => log(`dropped database ${dbName}`),
        (e) => console.error(`could not drop database ${dbName}: ${e}`)
      )
    }
  })())

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    console.error(`\n${signal}: cleaning up`)
    cleanup().finally(() => process.exit(130))
  })
}

// ---------------------------------------------------------------------------------------------
// Seeding through the core services (migrations run as StorageLive builds).

const seed = Effect.gen(function*() {
  const tenants = yield* Tenants
  const keys = yield* Keys
  const members = yield* Members
  const tenant = yield* tenants.create({ name: "Greater Riverside Chamber of Commerce", website: "https://riverside-chamber.example" })
  yield* tenants.addUser(tenant.id, "admin@riverside-chamber.example", "chamber_admin")
  // Two fields the API shows, one it hides: the list's custom-fields subquery has real work.
  yield* tenants.addField(tenant.id, { resource: "member", key: "membership_level", label: "Membership level", api_visible: true })
  yield* tenants.addField(tenant.id, { resource: "member", key: "board_member", label: "Board member", api_visible: true })
  yield* tenants.addField(tenant.id, { resource: "member", key: "internal_notes", label: "Internal notes", api_visible: false })
  yield* Effect.forEach(memberInputs(MEMBERS), (input) => members.create(tenant.id, input), { concurrency: 8, discard: true })
  // Far above what a run sends, should a daily quota be enforced one day.
  const dailyLimit = 2_000_000_000
  const read = yield* keys.mint({ tenant: tenant.id, asEmail: "admin@riverside-chamber.example", name: "Website directory", scopes: "read", dailyLimit })
  const write = yield* keys.mint({
    tenant: tenant.id,
    asEmail: "admin@riverside-chamber.example",
    name: "Back office",
    scopes: "members:write,invoices:write,payments:write",
    dailyLimit
  })
  return { read: read.key, write: write.key }
}).pipe(Effect.orDie)

// ---------------------------------------------------------------------------------------------
// Servers as children.

interface Server {
  readonly name: "ours" | "ours-nolog" | "ours-nolimit" | "ours+redis" | "baseline"
  readonly child: ChildProcess
  readonly base: string
  /** What the server printed (logs, errors): kept out of the report, summarised at the end. */
  readonly output: Output
}

const startServer = (
  name: Server["name"],
  file: string,
  options: { readonly nodeArgs?: ReadonlyArray<string>; readonly env?: Record<string, string>; readonly databaseUrl?: string } = {}
) =>
  new Promise<Server>((resolve, reject) => {
    const child = spawnNode([...(file === "./our-server.ts" ? CHAMBER_NODE_FLAGS : []), ...(options.nodeArgs ?? []), here(file)], {
      ...process.env,
      ...options.env,
      DATABASE_URL: options.databaseUrl ?? dbUrl,
      BENCH_POOL_SIZE: String(POOL_SIZE),
      // Far above the spec's 120 a minute: the limiter runs in full but never shapes the measurement.
      CHAMBER_RATE_LIMIT_PER_MINUTE: "1000000000",
      NODE_ENV: "production"
    })
    const output = newOutput()
    collectLines(child.stderr!, output)
    const timer = setTimeout(() => reject(new Error(`${name} server did not start within 60 s`)), 60_000)
    let listening = false
    collectLines(child.stdout!, output, (line) => {
      const match = line.match(new RegExp(`^${LISTENING} (\\d+)`))
      if (match === null || listening) return false
      listening = true
      clearTimeout(timer)
      resolve({ name, child, base: `http://127.0.0.1:${match[1]}`, output })
      return true
    })
    child.once("exit", (code, signal) => {
      clearTimeout(timer)
      reject(new Error(`${name} server exited early (code ${code}, signal ${signal})\n${output.first.join("\n")}`))
    })
  })

// ---------------------------------------------------------------------------------------------
// Checking that both servers answer the same and run the same SQL.

interface World {
  readonly keys: { readonly read: string; readonly write: string }
  /** The seeded members' ids, for invoices. */
  readonly memberIds: ReadonlyArray<number>
}

interface Answer {
  readonly status: number
  readonly text: string
  readonly json: any
  /** The statements the request executed, by transaction. */
  readonly sql: ReadonlyArray<Unit>
  /** The outbox rows it wrote. */
  readonly events: ReadonlyArray<{ readonly type: string; readonly payload: unknown }>
}

/** Calls a traced server once and collects its answer, its SQL and its outbox rows. */
type Call = (method: "GET" | "POST", path: string, key: string, body?: unknown) => Promise<Answer>

/** The once-a-minute last_used_at touch runs off the request path, whenever it likes. */
const offPath = (text: string) => text.startsWith("UPDATE api_keys SET last_used_at")

let lastEvent = 0
const caller = (server: Server): Call => async (method, path, key, body) => {
  const response = await fetch(server.base + path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  const sql = units(tracer!.take(), offPath)
  const rows = (await db!.query("SELECT id, type, payload FROM outbox_events WHERE id > $1 ORDER BY id", [lastEvent])).rows
  if (rows.length > 0) lastEvent = Number(rows[rows.length - 1].id)
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: response.status, text, json, sql, events: rows.map((r) => ({ type: r.type, payload: r.payload })) }
}

const firstDifference = (a: unknown, b: unknown, path = "$"): string | undefined => {
  if (isDeepStrictEqual(a, b)) return undefined
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null || Array.isArray(a) !== Array.isArray(b)) {
    return `${path}: ours ${JSON.stringify(a)?.slice(0, 200)} vs baseline ${JSON.stringify(b)?.slice(0, 200)}`
  }
  const keys = new Set([...Object.keys(a), ...Object.keys(b)])
  for (const k of keys) {
    const d = firstDifference((a as any)[k], (b as any)[k], `${path}.${k}`)
    if (d !== undefined) return d
  }
  return `${path}: differs`
}

class Disagreement extends Error {}

const expectStatus = (label: string, expected: number, ours: Answer, baseline: Answer) => {
  if (ours.status !== expected || baseline.status !== expected) {
    throw new Disagreement(
      `${label}: status ours ${ours.status}, baseline ${baseline.status} (expected ${expected})\nours: ${ours.text.slice(0, 500)}\nbaseline: ${
        baseline.text.slice(0, 500)
      }`
    )
  }
}

const expectSameJson = (label: string, ours: unknown, baseline: unknown) => {
  const difference = firstDifference(ours, baseline)
  if (difference !== undefined) throw new Disagreement(`${label}: the servers answer differently: ${difference}`)
}

/** The same statements (text and number of parameters), in the same transactions, in the same order. */
const expectSameSql = (label: string, ours: Answer, baseline: Answer) => {
  const a = describeUnits(ours.sql)
  const b = describeUnits(baseline.sql)
  if (isDeepStrictEqual(a, b)) return
  const at = a.findIndex((line, i) => line !== b[i])
  const i = at === -1 ? Math.min(a.length, b.length) : at
  throw new Disagreement(
    `${label}: the servers run different SQL; first difference at line ${i + 1}:\n  ours:     ${a[i] ?? "(nothing)"}\n  baseline: ${
      b[i] ?? "(nothing)"
    }\nours in full:\n${a.join("\n")}\nbaseline in full:\n${b.join("\n")}`
  )
}

const expectEvents = (label: string, answer: Answer, expected: ReadonlyArray<{ readonly type: string; readonly payload: unknown }>) => {
  const difference = firstDifference(answer.events, expected)
  if (difference !== undefined) throw new Disagreement(`${label}: outbox rows not as expected: ${difference}`)
}

/** A JSON value without some keys, wherever they are (ids, timestamps, numbers that differ by design). */
const without = (value: unknown, keys: ReadonlyArray<string>) => JSON.parse(JSON.stringify(value), (k, v) => (keys.includes(k) ? undefined : v))

const countSql = (answer: Answer) => answer.sql.reduce((n, u) => n + (u.tx ? u.statements.length : 1), 0)

// ---------------------------------------------------------------------------------------------
// Endpoints.

interface Endpoint {
  readonly id: string
  readonly name: string
  readonly key: keyof World["keys"]
  /** What one measured unit is: one request, or the steps of a flow sent one after the other on a connection. */
  readonly steps: ReadonlyArray<string>
  /** Also measured on the server with the access log off. */
  readonly withoutLog: boolean
  /** Also measured without the rate limiter and with it on Redis (ours counts in-process). */
  readonly withLimiters: boolean
  /** The bar on its throughput against the baseline's. */
  readonly bar: number
  /** autocannon's `requests`: the request sequence each connection repeats. */
  readonly requests: (world: World) => Array<Record<string, unknown>>
  /** Throws a Disagreement unless both servers answer alike; returns a line for the log. */
  readonly verify: (world: World, ours: Call, baseline: Call) => Promise<string>
}

const JSON_HEADERS = { "content-type": "application/json" }

const getEndpoint = (id: string, name: string, path: (world: World) => string, bar: number): Endpoint => ({
  id,
  name,
  key: "read",
  steps: [name],
  withoutLog: id !== "member",
  withLimiters: id === "members",
  bar,
  requests: (world) => [{ method: "GET", path: path(world) }],
  verify: async (world, ours, baseline) => {
    const a = await ours("GET", path(world), world.keys.read)
    const b = await baseline("GET", path(world), world.keys.read)
    expectStatus(name, 200, a, b)
    const how = a.text === b.text ? "byte-identical" : (expectSameJson(name, a.json, b.json), "JSON-equal (bytes differ)")
    expectSameSql(name, a, b)
    const detail = Array.isArray(a.json.data) ? `, ${a.json.data.length} rows, total ${a.json.meta?.total}` : ""
    return `${how}, ${(Buffer.byteLength(a.text) / 1024).toFixed(1)} KB${detail}; same SQL (${countSql(a)} statements)`
  }
})

const nextMember = memberBodies()

const membersPost: Endpoint = {
  id: "members-post",
  name: "POST /api/v1/members",
  key: "write",
  steps: ["POST /api/v1/members"],
  withoutLog: false,
  withLimiters: false,
  bar: BAR.writes,
  requests: () => [{
    method: "POST",
    path: "/api/v1/members",
    headers: JSON_HEADERS,
    setupRequest: (request: Record<string, unknown>) => ({ ...request, body: JSON.stringify(nextMember()) })
  }],
  verify: async (world, ours, baseline) => {
    // One body, four times, alternately: the slug takes -2, -3, -4 on whichever server comes next.
    const body = { ...memberBodies(7)(), name: "Bench Verification Printing Co." }
    const slugs = ["bench-verification-printing-co", "bench-verification-printing-co-2", "bench-verification-printing-co-3", "bench-verification-printing-co-4"]
    const answers: Array<Answer> = []
    for (const call of [ours, baseline, ours, baseline]) answers.push(await call("POST", "/api/v1/members", world.keys.write, body))
    for (let pair = 0; pair < 2; pair++) {
      const label = `POST /api/v1/members (call ${pair + 1} of 2 on each)`
      const [a, b] = [answers[2 * pair]!, answers[2 * pair + 1]!]
      expectStatus(label, 201, a, b)
      for (const [i, answer] of [a, b].entries()) {
        const slug = answer.json.data.attributes.slug
        if (slug !== slugs[2 * pair + i]) throw new Disagreement(`${label}: ${i === 0 ? "ours" : "baseline"} made slug ${slug}, expected ${slugs[2 * pair + i]}`)
        expectEvents(`${label}, ${i === 0 ? "ours" : "baseline"}`, answer, [{ type: "member.created", payload: answer.json.data }])
      }
      expectSameJson(label, without(a.json, ["id", "slug", "created_at", "updated_at"]), without(b.json, ["id", "slug", "created_at", "updated_at"]))
      expectSameSql(label, a, b)
    }
    return `JSON-equal but for id, slug and timestamps; slugs ${slugs.map((s) => s.replace(/^bench-verification-printing-co/, "…")).join(", ")} alternately; ` +
      `member.created rows equal to the answers; same SQL (${countSql(answers[0]!)} statements, ${answers[0]!.sql.filter((u) => u.tx).length} transaction)`
  }
}

const nextInvoice = (() => {
  let next: ReturnType<typeof invoiceBodies> | undefined
  return (world: World) => (next ??= invoiceBodies(world.memberIds))()
})()
const nextPayment = paymentBodies()
const cents = (n: number) => `${Math.floor(n / 100)}.${String(n % 100).padStart(2, "0")}`

interface FlowContext {
  invoice?: number | undefined
  balance?: number | undefined
}

const invoiceFlow: Endpoint = {
  id: "invoices",
  name: "invoice flow: POST /api/v1/invoices, POST .../{id}/issue, POST .../{id}/payments (whole balance)",
  key: "write",
  steps: ["POST /api/v1/invoices", "POST /api/v1/invoices/{id}/issue", "POST /api/v1/invoices/{id}/payments"],
  withoutLog: false,
  withLimiters: false,
  bar: BAR.writes,
  requests: (world) => [
    {
      method: "POST",
      path: "/api/v1/invoices",
      headers: JSON_HEADERS,
      setupRequest: (request: Record<string, unknown>) => ({ ...request, body: JSON.stringify(nextInvoice(world)) }),
      onResponse: (status: number, body: string, context: FlowContext) => {
        if (status !== 201) return
        const data = JSON.parse(body).data
        context.invoice = data.id
        context.balance = data.attributes.balance_cents
      }
    },
    {
      method: "POST",
      // A step whose invoice is missing (its create failed) is skipped: the connection starts a new flow.
      setupRequest: (request: Record<string, unknown>, context: FlowContext) =>
        context.invoice === undefined ? undefined : { ...request, path: `/api/v1/invoices/${context.invoice}/issue` },
      onResponse: (status: number, _body: string, context: FlowContext) => {
        if (status !== 200) context.invoice = undefined
      }
    },
    {
      method: "POST",
      headers: JSON_HEADERS,
      setupRequest: (request: Record<string, unknown>, context: FlowContext) =>
        context.invoice === undefined
          ? undefined
          : { ...request, path: `/api/v1/invoices/${context.invoice}/payments`, body: JSON.stringify(nextPayment(context.balance!)) }
    }
  ],
  verify: async (world, ours, baseline) => {
    const create = {
      member_id: world.memberIds[0],
      lines: [{ description: "Annual membership dues (Gold)", unit: "900.00" }, { description: "Annual gala ticket", unit: "85.00", quantity: 2 }],
      memo: "Thank you for being a member."
    }
    const flow = async (call: Call) => {
      const created = await call("POST", "/api/v1/invoices", world.keys.write, create)
      const id = created.json?.data?.id
      const issued = await call("POST", `/api/v1/invoices/${id}/issue`, world.keys.write)
      const payment = { method: "check", amount: cents(created.json?.data?.attributes?.balance_cents ?? 0), received_on: "2026-11-20", reference: "Check #1042", notes: "Dropped off at the front desk." }
      const paid = await call("POST", `/api/v1/invoices/${id}/payments`, world.keys.write, payment)
      const stored = async (sql: string) => (await db!.query(sql, [id])).rows
      return {
        created,
        issued,
        paid,
        lines: await stored("SELECT position, description, unit_cents, quantity FROM invoice_lines WHERE invoice_id = $1 ORDER BY position"),
        payments: await stored(
          "SELECT member_id, method, gateway, amount_cents, received_on::text, reference, notes FROM payments WHERE invoice_id = $1 ORDER BY id"
        ),
        invoice: (await stored("SELECT status, amount_paid_cents, balance_cents, length(pay_token) AS token FROM invoices WHERE id = $1"))[0]
      }
    }
    const a = await flow(ours)
    const b = await flow(baseline)
    const differs = ["id", "number", "issued_at", "created_at", "updated_at"]
    const steps = [["create", a.created, b.created, 201], ["issue", a.issued, b.issued, 200], ["payment", a.paid, b.paid, 201]] as const
    for (const [step, x, y, status] of steps) {
      expectStatus(`invoice flow, ${step}`, status, x, y)
      expectSameJson(`invoice flow, ${step}`, without(x.json, differs), without(y.json, differs))
      expectSameSql(`invoice flow, ${step}`, x, y)
    }
    for (const [who, f] of [["ours", a], ["baseline", b]] as const) {
      expectEvents(`invoice flow, create, ${who}`, f.created, [])
      expectEvents(`invoice flow, issue, ${who}`, f.issued, [{ type: "invoice.issued", payload: f.issued.json.data }])
      const paid = f.paid.events[0]?.payload as any
      if (f.paid.events.length !== 1 || f.paid.events[0]!.type !== "invoice.paid" || paid?.attributes?.status !== "paid" || paid?.attributes?.balance_cents !== 0) {
        throw new Disagreement(`invoice flow, payment, ${who}: expected one invoice.paid row of the paid invoice, got ${JSON.stringify(f.paid.events).slice(0, 400)}`)
      }
    }
    expectSameJson("invoice flow, invoice.paid row", without(a.paid.events, differs), without(b.paid.events, differs))
    const numberOf = (answer: Answer) => Number(/^INV-(\d{6,})$/.exec(answer.json.data.attributes.number)?.[1])
    if (numberOf(b.issued) !== numberOf(a.issued) + 1) {
      throw new Disagreement(`invoice flow: numbers ${a.issued.json.data.attributes.number} (ours) then ${b.issued.json.data.attributes.number} (baseline) are not consecutive`)
    }
    expectSameJson("invoice flow, stored lines", a.lines, b.lines)
    expectSameJson("invoice flow, stored payment", a.payments, b.payments)
    expectSameJson("invoice flow, stored invoice", a.invoice, b.invoice)
    const shape = steps.map(([step, x]) => `${step} ${countSql(x)} statements, ${x.sql.filter((u) => u.tx).length} transaction`).join("; ")
    return `JSON-equal but for ids, number and timestamps; numbers consecutive; same lines, payment and invoice stored; ` +
      `same outbox rows; same SQL (${shape})`
  }
}

const ALL_ENDPOINTS: ReadonlyArray<Endpoint> = [
  getEndpoint("members", "GET /api/v1/members (page 1)", () => "/api/v1/members?page=1", BAR.throughput),
  getEndpoint("me", "GET /api/v1/me", () => "/api/v1/me", BAR.single),
  // A member from the middle of the seeded ones.
  getEndpoint("member", "GET /api/v1/members/{id}", (world) => `/api/v1/members/${world.memberIds[world.memberIds.length >> 1]}`, BAR.single),
  membersPost,
  invoiceFlow
]
/** BENCH_ONLY=members (or me, member, members-post, invoices, relay; comma-separated) measures a selection, e.g. to profile one. */
const ENDPOINTS = ALL_ENDPOINTS.filter((e) => ONLY.length === 0 || ONLY.includes(e.id))
/** The webhook relay section (relay.ts). */
const RELAY = ONLY.length === 0 || ONLY.includes("relay")
{
  const known = [...ALL_ENDPOINTS.map((e) => e.id), "relay", "large", "embedded"]
  const unknown = ONLY.filter((id) => !known.includes(id))
  if (unknown.length > 0) {
    console.error(`BENCH_ONLY: unknown section ${unknown.join(", ")}; known: ${known.join(", ")}`)
    process.exit(2)
  }
}

// ---------------------------------------------------------------------------------------------
// Load.

interface Measured {
  /** Units (requests, or flows) completed with every response 2xx, per second. */
  readonly rps: number
  readonly p50: number
  readonly p99: number
  readonly cpuMsPerRequest: number
  readonly peakRssMb: number
  readonly requests: number
  readonly bad: number
  readonly kbPerResponse: number
  /** Per step of a flow: p50 and p99 of its 2xx responses. */
  readonly steps: ReadonlyArray<{ readonly p50: number; readonly p99: number }>
}

type OnResponse = (client: any, status: number, time: number) => void

/** One autocannon run of an endpoint's request sequence. */
const fire = (base: string, endpoint: Endpoint, world: World, seconds: number, onResponse?: OnResponse) =>
  new Promise<any>((resolve, reject) => {
    const instance = autocannon(
      {
        url: base,
        connections: CONNECTIONS,
        duration: seconds,
        headers: { authorization: `Bearer ${world.keys[endpoint.key]}` },
        requests: endpoint.requests(world)
      },
      (error: unknown, result: any) => (error ? reject(error) : resolve(result))
    )
    if (onResponse !== undefined) {
      instance.on("response", (client: unknown, status: number, _bytes: number, time: number) => onResponse(client, status, time))
    }
  })

const percentile = (values: ReadonlyArray<number>) => {
  const sorted = Float64Array.from(values).sort()
  return (p: number) => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!)
}

/** Accumulates one server's rounds on one endpoint. */
class Tally {
  /** Per unit: a request's latency, or a flow's (the sum of its steps' latencies). */
  readonly latencies: Array<number> = []
  readonly stepLatencies: Array<Array<number>>
  ok = 0
  requests = 0
  bad = 0
  bytes = 0
  seconds = 0
  cpu = 0
  peakRssMb = 0

  readonly server: Server
  readonly endpoint: Endpoint

  constructor(server: Server, endpoint: Endpoint) {
    this.server = server
    this.endpoint = endpoint
    this.stepLatencies = endpoint.steps.map(() => [])
  }

  async round(world: World, seconds: number) {
    const pid = this.server.child.pid!
    const sample = () => {
      const rss = procStatus(pid, "VmRSS")
      if (rss > this.peakRssMb) this.peakRssMb = rss
    }
    const last = this.endpoint.steps.length - 1
    // Each connection's flow so far: the steps are sent one after the other on it.
    const flows = new Map<unknown, { sum: number; ok: boolean }>()
    const onResponse: OnResponse = (client, status, time) => {
      const good = status >= 200 && status < 300
      // With pipelining 1, the iterator still points at the request this response answers.
      const step = last === 0 ? 0 : (client.requestIterator.currentRequestIndex as number)
      if (good) this.stepLatencies[step]!.push(time)
      let flow = flows.get(client)
      if (step === 0 || flow === undefined) flows.set(client, flow = { sum: 0, ok: true })
      flow.sum += time
      flow.ok &&= good
      if (step === last) {
        if (flow.ok) {
          this.ok++
          this.latencies.push(flow.sum)
        }
        flows.delete(client)
      }
    }
    sample()
    const sampler = setInterval(sample, 100)
    const cpuBefore = cpuSeconds(pid)
    try {
      const r = await fire(this.server.base, this.endpoint, world, seconds, onResponse)
      this.cpu += cpuSeconds(pid) - cpuBefore
      this.requests += r.requests.total
      this.bad += r.non2xx + r.errors + r.timeouts
      this.bytes += r.throughput.total
      this.seconds += r.duration
      sample()
    } finally {
      clearInterval(sampler)
    }
  }

  result(): Measured {
    const pct = percentile(this.latencies)
    return {
      rps: this.ok / this.seconds,
      p50: pct(50),
      p99: pct(99),
      cpuMsPerRequest: this.ok > 0 ? (this.cpu * 1000) / this.ok : NaN,
      peakRssMb: this.peakRssMb,
      requests: this.requests,
      bad: this.bad,
      kbPerResponse: this.ok > 0 ? this.bytes / this.ok / 1024 : 0,
      steps: this.stepLatencies.map((l) => {
        const p = percentile(l)
        return { p50: p(50), p99: p(99) }
      })
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Report.

const f = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : "n/a")
const pad = (s: string, n: number) => s.padStart(n)

const printTable = (endpoint: Endpoint, rows: ReadonlyArray<readonly [string, Measured]>) => {
  const flow = endpoint.steps.length > 1
  const unit = flow ? "flow" : "req"
  log(`\n${endpoint.name}`)
  log(
    `  ${"server".padEnd(9)}${pad(flow ? "flows/s" : "req/s", 9)}${pad("p50 ms", 9)}${pad("p99 ms", 9)}${pad(`CPU ms/${unit}`, 13)}${pad("peak RSS MB", 13)}${
      pad("requests", 10)
    }${pad("non-2xx/err", 13)}${pad(`KB/${flow ? "flow" : "resp"}`, 9)}`
  )
  for (const [name, m] of rows) {
    log(
      `  ${name.padEnd(9)}${pad(f(m.rps), 9)}${pad(f(m.p50), 9)}${pad(f(m.p99), 9)}${pad(f(m.cpuMsPerRequest, 3), 13)}${pad(f(m.peakRssMb), 13)}${
        pad(String(m.requests), 10)
      }${pad(String(m.bad), 13)}${pad(f(m.kbPerResponse), 9)}`
    )
  }
  if (flow) {
    log(`  per step, p50 / p99 ms of its responses (a flow's latency is the sum of its three):`)
    endpoint.steps.forEach((step, i) => log(`    ${step.padEnd(38)}${rows.map(([name, m]) => `${name} ${f(m.steps[i]!.p50)} / ${f(m.steps[i]!.p99)}`).join("   ")}`))
  }
  const ratio = (label: string, a: Measured, b: Measured) =>
    log(
      `  ${label}: throughput ${f(a.rps / b.rps, 2)}x, p50 ${f(a.p50 / b.p50, 2)}x, p99 ${f(a.p99 / b.p99, 2)}x, ` +
        `CPU/${unit} ${f(a.cpuMsPerRequest / b.cpuMsPerRequest, 2)}x, peak RSS ${f(a.peakRssMb / b.peakRssMb, 2)}x`
    )
  const get = (name: string) => rows.find(([n]) => n === name)?.[1]
  ratio("ours/baseline", get("ours")!, get("baseline")!)
  const noLog = get("ours-nolog")
  if (noLog !== undefined) ratio("ours/ours-nolog (the access log's price)", get("ours")!, noLog)
}

// ---------------------------------------------------------------------------------------------

/** The tables the measured writes grow. */
const WRITTEN_TABLES = ["members", "outbox_events", "invoices", "invoice_lines", "invoice_sequences", "payments", "api_keys"]

/**
 * Before a round of a write endpoint: the previous round's dead rows vacuumed, statistics
 * refreshed and dirty pages flushed, outside the measured window, so no round pays for another's
 * writes. CHECKPOINT needs a superuser (or pg_checkpoint); without it the round goes ahead anyway.
 */
const settle = async () => {
  await db!.query(`VACUUM (ANALYZE) ${WRITTEN_TABLES.join(", ")}`)
  await db!.query("CHECKPOINT").catch(() => {})
}

// ---------------------------------------------------------------------------------------------

const main = async () => {
  const pgVersion = await admin(async (c) => {
    const version = (await c.query("SHOW server_version")).rows[0].server_version as string
    await c.query(`CREATE DATABASE ${dbName}`)
    return version
  })
  dbCreated = true
  log(`bench: node ${process.version}, ${cpus().length} CPUs, PostgreSQL ${pgVersion}, database ${dbName}`)
  db = new pg.Client({ connectionString: dbUrl })
  await db.connect()
  if (ENDPOINTS.length > 0) await benchHttp(db)
  if (RELAY) await benchRelay({ dbUrl, db, log, elapsed })
  // Large tenants (large.ts): only when asked for, BENCH_ONLY=large.
  if (ONLY.includes("large")) await benchLarge({ dbUrl, log, elapsed })
  // The embedded database (embedded.ts): only when asked for, BENCH_ONLY=embedded.
  if (ONLY.includes("embedded")) await benchEmbedded({ dbUrl, log, elapsed })
}

/** The HTTP endpoints: seed, same answers and SQL, measured rounds, report. */
const benchHttp = async (db: pg.Client) => {
  log(`bench: ${MEMBERS} members, ${CONNECTIONS} connections, warm-up ${WARMUP} s + measured ${DURATION} s per server and endpoint, DB pool ${POOL_SIZE} each`)
  log(`bench: endpoints ${ENDPOINTS.map((e) => e.id).join(", ")}`)

  const keys = await Effect.runPromise(Effect.scoped(seed.pipe(Effect.provide(StorageLive({ _tag: "Postgres", url: dbUrl, maxConnections: 10 })))))
  // A steady state: statistics and visibility map fresh, so no autovacuum mid-run changes a plan.
  await db.query("VACUUM ANALYZE")
  // The write endpoints add thousands of rows a round. Autovacuum and checkpoints would then run
  // during whichever round comes next (the server measured after the faster one, mostly): they
  // are kept out of the measured windows instead, done by settle() before each round.
  for (const table of WRITTEN_TABLES) await db.query(`ALTER TABLE ${table} SET (autovacuum_enabled = false, toast.autovacuum_enabled = false)`)
  const memberIds = (await db.query("SELECT id FROM members ORDER BY id")).rows.map((r) => Number(r.id))
  const seededUpTo = memberIds[memberIds.length - 1] ?? 0
  const world: World = { keys, memberIds }
  lastEvent = Number((await db.query("SELECT coalesce(max(id), 0) AS id FROM outbox_events")).rows[0].id)
  log(`[${elapsed()}] seeded`)

  // Same answers and same SQL, on a pair of servers started through the tracing proxy.
  tracer = await startTracer(dbUrl)
  const traced = await Promise.all([
    startServer("ours", "./our-server.ts", { databaseUrl: tracer.url }),
    startServer("baseline", "./baseline-server.ts", { databaseUrl: tracer.url })
  ])
  // What ours ran as it started (the migrations check) is no request's.
  tracer.take()
  log("verifying the servers answer the same and run the same SQL (both through a tracing proxy):")
  const [callOurs, callBaseline] = traced.map(caller) as [Call, Call]
  for (const endpoint of ENDPOINTS) log(`  ${endpoint.name}: ${await endpoint.verify(world, callOurs, callBaseline)}`)
  await Promise.all(traced.map((s) => stopChild(s.child)))
  await tracer.close()
  tracer = undefined

  const accessLog = accessLogFile(dbName)
  const limiters = ENDPOINTS.some((e) => e.withLimiters)
  // Ours as shipped: the in-process rate limiter and the access log, one JSON line per request
  // appended to a file. The others each leave one of them out, or count in Redis.
  const logged = { BENCH_ACCESS_LOG: accessLog }
  const [ours, noLog, baseline, noLimit, withRedis] = await Promise.all([
    startServer("ours", "./our-server.ts", { env: logged }),
    startServer("ours-nolog", "./our-server.ts"),
    startServer("baseline", "./baseline-server.ts"),
    ...(limiters
      ? [
        startServer("ours-nolimit", "./our-server.ts", { env: { ...logged, BENCH_RATE_LIMITS: "off" } }),
        startServer("ours+redis", "./our-server.ts", { env: { ...logged, BENCH_RATE_LIMITS: "redis", REDIS_URL } })
      ]
      : [])
  ])
  const servers = [ours, noLog, baseline, ...(limiters ? [noLimit!, withRedis!] : [])]
  log(`[${elapsed()}] servers up: ${servers.map((s) => `${s.name} ${s.base} (pid ${s.child.pid})`).join(", ")}`)

  const results: Array<{ endpoint: Endpoint; rows: Array<readonly [string, Measured]> }> = []
  for (const endpoint of ENDPOINTS) {
    const measured = [ours, ...(endpoint.withoutLog ? [noLog] : []), ...(endpoint.withLimiters ? [noLimit!, withRedis!] : []), baseline]
    for (const server of measured) await fire(server.base, endpoint, world, WARMUP)
    const writes = endpoint.steps.some((step) => step.startsWith("POST"))
    const tallies = measured.map((server) => new Tally(server, endpoint))
    for (let round = 1; round <= ROUNDS; round++) {
      for (const tally of tallies) {
        const before = tally.ok
        const secondsBefore = tally.seconds
        if (writes) await settle()
        await tally.round(world, DURATION / ROUNDS)
        log(
          `[${elapsed()}] ${endpoint.id} round ${round}/${ROUNDS} ${tally.server.name}: ${f((tally.ok - before) / (tally.seconds - secondsBefore))} ${
            endpoint.steps.length > 1 ? "flows" : "req"
          }/s`
        )
      }
    }
    results.push({ endpoint, rows: tallies.map((t) => [t.server.name, t.result()] as const) })
  }
  const hwm = { ours: procStatus(ours.child.pid!, "VmHWM"), baseline: procStatus(baseline.child.pid!, "VmHWM") }
  const lines = readFileSync(accessLog, "utf8").split("\n").filter((l) => l !== "").length

  log(`\n=== results: ${CONNECTIONS} connections, ${DURATION} s measured per server (${ROUNDS} alternating rounds), ${cpus().length} CPUs shared by load generator, servers and PostgreSQL ===`)
  log("req/s = 2xx responses per second (flows/s: flows whose three responses were 2xx); p50/p99 = latency over every response")
  log("(every flow) of every round; CPU ms/req = server process user+sys CPU / 2xx responses (flows); peak RSS = max VmRSS")
  log("sampled every 100 ms during the measured rounds")
  for (const r of results) printTable(r.endpoint, r.rows)
  log(
    `\nthe servers of ours with the access log on wrote ${lines} lines (JSON) to ${accessLog}${
      KEEP_ACCESS_LOG ? "" : " (removed at the end; BENCH_KEEP_ACCESS_LOG=1 keeps it)"
    }`
  )
  log(`\nserver peak RSS over the whole bench (VmHWM): ours ${f(hwm.ours)} MB, baseline ${f(hwm.baseline)} MB`)

  if (ENDPOINTS.includes(membersPost)) {
    const s = (await db.query(
      `SELECT count(*)::int AS n, count(*) FILTER (WHERE slug ~ '-[0-9]+$')::int AS suffixed FROM members WHERE id > $1 AND name NOT LIKE 'Bench Verification%'`,
      [seededUpTo]
    )).rows[0]
    log(`POST /api/v1/members created ${s.n} members; ${f((100 * s.suffixed) / Math.max(1, s.n))}% of them took a -N slug (their name's slug was taken)`)
  }
  if (ENDPOINTS.includes(invoiceFlow)) {
    const s = (await db.query(`SELECT status, count(*)::int AS n FROM invoices GROUP BY status ORDER BY status`)).rows
    log(`invoices at the end: ${s.map((r) => `${r.n} ${r.status}`).join(", ")} (drafts and open ones: flows cut off at the end of a run)`)
  }

  const measured = (endpoint: Endpoint) => results.find((r) => r.endpoint === endpoint)
  const row = (r: { rows: Array<readonly [string, Measured]> }, name: string) => r.rows.find(([n]) => n === name)?.[1]
  const clean = (r: { rows: Array<readonly [string, Measured]> }) => r.rows.every(([, m]) => m.bad === 0)
  const failedNote = " -- some requests failed (non-2xx/errors above), the run does not count"
  log("")
  const members = measured(ALL_ENDPOINTS[0]!)
  if (members === undefined) log("no verdict on the members page: it was not measured (BENCH_ONLY)")
  else {
    const [o, w, b] = [row(members, "ours")!, row(members, "ours-nolog")!, row(members, "baseline")!]
    const throughput = o.rps / b.rps
    const p99 = o.p99 / b.p99
    const rss = o.peakRssMb / b.peakRssMb
    const pass = throughput >= BAR.throughput && p99 <= BAR.p99 && rss <= BAR.peakRss && clean(members)
    log(
      `${pass ? "PASS" : "FAIL"}: members page throughput ${f(throughput, 2)}x baseline (bar >= ${BAR.throughput}x), ` +
        `p99 ${f(p99, 2)}x baseline (bar <= ${BAR.p99}x), peak RSS ${f(rss, 2)}x baseline (bar <= ${BAR.peakRss}x)${clean(members) ? "" : failedNote}`
    )
    const logCost = 1 - o.rps / w.rps
    log(`${logCost <= BAR.accessLogCost ? "PASS" : "FAIL"}: the access log costs ${f(logCost * 100)}% of the members page's throughput (bar <= ${BAR.accessLogCost * 100}%)`)
    const bare = row(members, "ours-nolimit")
    if (bare !== undefined) {
      for (const [name, label, bar] of [["ours", "in-process", BAR.limiterInProcess], ["ours+redis", "Redis", BAR.limiterRedis]] as const) {
        const cost = 1 - row(members, name)!.rps / bare.rps
        log(
          `${cost <= bar ? "PASS" : "FAIL"}: the rate limiter (${label}) costs ${f(cost * 100)}% of the members page's throughput ` +
            `against the same server without it (bar <= ${bar * 100}%); p99 ${f(row(members, name)!.p99 / bare.p99, 2)}x`
        )
      }
    }
  }
  for (const endpoint of [...ALL_ENDPOINTS.slice(1, 3), membersPost, invoiceFlow]) {
    const r = measured(endpoint)
    if (r === undefined) continue
    const [o, b] = [row(r, "ours")!, row(r, "baseline")!]
    const throughput = o.rps / b.rps
    const pass = throughput >= endpoint.bar && clean(r)
    log(
      `${pass ? "PASS" : "FAIL"}: ${endpoint.steps.length > 1 ? "invoice flow" : endpoint.name} throughput ${f(throughput, 2)}x baseline (bar >= ${endpoint.bar}x), ` +
        `p99 ${f(o.p99 / b.p99, 2)}x baseline${clean(r) ? "" : failedNote}`
    )
  }
  for (const server of servers) {
    if (server.output.lines === 0) continue
    log(`\nnote: the ${server.name} server printed ${server.output.lines} log line(s) during the bench (e.g. requests cut off when autocannon closes its connections at the end of a run); first lines:`)
    for (const line of server.output.first.slice(0, 4)) log(`  | ${line.slice(0, 160)}`)
  }
  // Idle from here on: not left running beside whatever the bench measures next.
  await Promise.all(servers.map((server) => stopChild(server.child)))
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
