/**
 * BASELINE server for the bench: plain node:http + `pg`, no framework, doing the same work as
 * ours for the measured endpoints, with the same SQL statements in the same transactions (the
 * bench checks this through bench/sql-trace.ts before it measures anything):
 *
 * - every request: an X-Request-Id (a well-formed incoming one kept, else a new UUID), only
 *   canonical paths routed, a body over 1 MiB refused by its Content-Length, one Authorization
 *   header at most, as ours does;
 * - auth: `Authorization: Bearer cck_...`, key shape check, SHA-256 hash, the same lookup as
 *   ApiKeyRepoSql.findActiveByHash (api_keys joined with tenants), last_used_at touched at most
 *   once a minute off the request path, scope check;
 * - GET /api/v1/members?page=N: the same statements as MemberRepoSql.list (MemberListSql.ts,
 *   PageSql.countedPage: page 1 one statement, the kept count beside the columns and visible
 *   custom fields subquery, default name order, 100 a page; a later page the count, then the
 *   page from the nearer end) and the same JSON envelope;
 * - GET /api/v1/me: the same connection-info JSON;
 * - POST /api/v1/members (Members.create): the body checked field by field, the slug made from
 *   the name and made unique with -2, -3... (the taken slugs read first; a conflicting insert
 *   tries the next), the insert, the member read back, the member.created outbox row, all in one
 *   transaction;
 * - POST /api/v1/invoices (Invoices.create): the lines totalled exactly in cents, the member
 *   checked, the tenant read for its currency, then invoice + lines in one transaction;
 * - POST /api/v1/invoices/{id}/issue (Invoices.issue): in one transaction, the invoice locked,
 *   the tenant read, the next number from invoice_sequences, the update, the invoice read back,
 *   the invoice.issued outbox row;
 * - POST /api/v1/invoices/{id}/payments (Payments.record): in one transaction, the invoice
 *   locked and checked, the payment inserted and read back, the invoice updated and read back,
 *   invoice.paid when the balance reaches 0.
 *
 * Pool of BENCH_POOL_SIZE connections (same as ours); statements are prepared (named), as
 * @effect/sql-pg prepares them, BEGIN and COMMIT included. Prints `BENCH_LISTENING <port>`.
 */
import { createHash, getRandomValues, randomBytes, randomUUID } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import pg from "pg"
import { LISTENING, POOL_SIZE } from "./shared.ts"

const url = process.env.DATABASE_URL
if (url === undefined || url === "") throw new Error("baseline-server: DATABASE_URL is required")

const pool = new pg.Pool({ connectionString: url, max: POOL_SIZE, application_name: "chamber-bench-baseline" })
// An idle connection that drops (the server stopping) is not a crash.
pool.on("error", (error) => console.error(`baseline-server: idle connection: ${error.message}`))

const PER_PAGE = 100
const KEY_SHAPE = /^cck_[0-9A-Za-z]{40}$/
const MAX_CENTS = Number.MAX_SAFE_INTEGER
const MAX_BODY = 1024 * 1024

// ---------------------------------------------------------------------------------------------
// SQL: the product's statements (ResourceSql.ts, the repositories), written out.

const iso = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`

const AUTH_SQL = `SELECT k.id, k.tenant_id, k.name, k.prefix, k.scopes, k.daily_limit,
       t.public_id AS chamber_id, t.name AS chamber_name, t.website AS chamber_website
  FROM api_keys k JOIN tenants t ON t.id = k.tenant_id
  WHERE k.key_hash = $1 AND k.revoked_at IS NULL`

const MEMBER_COLUMNS = `m.id, m.name, m.slug, m.status, m.industry, m.secondary_industries, m.slogan, m.about, m.website,
  m.email, m.phone, m.address_line1, m.address_line2, m.city, m.state, m.zip, m.member_since::text AS member_since,
  m.employee_count, m.directory_visible,
  (SELECT coalesce(jsonb_object_agg(e.key, e.value), '{}'::jsonb)
     FROM jsonb_each(m.custom_fields) e
     JOIN custom_field_definitions d
       ON d.tenant_id = m.tenant_id AND d.resource = 'member' AND d.api_visible AND d.key = e.key) AS custom_fields,
  ${iso("m.created_at")} AS created_at, ${iso("m.updated_at")} AS updated_at`

/** The chamber's kept member count (migration 0011), as MemberListSql.countedMembers reads it. */
const TOTAL = `(SELECT coalesce(sum(c.members), 0)::int8 FROM member_counts c WHERE c.tenant_id = $1)`
const NAME_ORDER = `lower(m.name) COLLATE "C" ASC, m.id ASC`

/** Page 1: the total beside the rows. */
const FIRST_PAGE_SQL = `SELECT ${TOTAL} AS total_count, ${MEMBER_COLUMNS}
  FROM members m WHERE m.tenant_id = $2
  ORDER BY ${NAME_ORDER} LIMIT $3`

const TOTAL_SQL = `SELECT ${TOTAL} AS total_count`

/** A later page: its ids read forward, or backward from the end, then its rows in order. */
const laterPageSql = (reversed: boolean) =>
  `SELECT ${TOTAL} AS total_count, ${MEMBER_COLUMNS}
  FROM members m
  JOIN (SELECT m.id FROM members m WHERE m.tenant_id = $2
        ORDER BY ${reversed ? `lower(m.name) COLLATE "C" DESC, m.id DESC` : NAME_ORDER}
        LIMIT $3 OFFSET $4) listed
    ON listed.id = m.id
  ORDER BY ${NAME_ORDER}`
const LATER_PAGE_SQL = laterPageSql(false)
const LATER_PAGE_REVERSED_SQL = laterPageSql(true)

const MEMBER_FIND_SQL = `SELECT ${MEMBER_COLUMNS} FROM members m WHERE m.tenant_id = $1 AND m.id = $2`

const SLUGS_SQL = `SELECT slug FROM members WHERE tenant_id = $1 AND (slug = $2 OR slug LIKE $3)`

const MEMBER_FIELDS = [
  "name", "slug", "status", "industry", "secondary_industries", "slogan", "about", "website", "email", "phone",
  "address_line1", "address_line2", "city", "state", "zip", "member_since", "employee_count", "directory_visible", "custom_fields"
] as const

/** `INSERT INTO t ("a","b") VALUES ($1,$2)` as the SQL client writes it. */
const insertInto = (table: string, columns: ReadonlyArray<string>, rows = 1) =>
  `INSERT INTO ${table} (${columns.map((c) => `"${c}"`).join(",")}) VALUES ${
    Array.from({ length: rows }, (_, r) => `(${columns.map((_, i) => `$${r * columns.length + i + 1}`).join(",")})`).join(",")
  }`

const MEMBER_INSERT_SQL = `${insertInto("members", ["tenant_id", ...MEMBER_FIELDS])}
  ON CONFLICT (tenant_id, slug) DO NOTHING RETURNING id`

// The event and one delivery per active subscription listing its kind, and the NOTIFY, in one
// statement: pg-adapter OutboxSql's, word for word.
const OUTBOX_SQL = `
        WITH e AS (
          INSERT INTO outbox_events (event_id, tenant_id, type, payload)
          VALUES ($1, $2, $3, $4::jsonb) RETURNING *
        ), d AS (
          INSERT INTO webhook_deliveries (tenant_id, event_id, hook_id)
          SELECT e.tenant_id, e.id, s.id FROM e
          JOIN webhook_subscriptions s ON s.tenant_id = e.tenant_id AND s.active AND s.events @> jsonb_build_array(e.type)
          RETURNING 1
        )
        -- Relays listening are told on commit (webhook-relay Relay.ts); without a delivery, nothing to tell.
        SELECT e.*, (SELECT pg_notify('chamber_deliveries', '') FROM d LIMIT 1) IS NULL AS quiet FROM e`

const TENANT_SQL = `SELECT * FROM tenants WHERE id = $1`

const INVOICE_COLUMNS = `i.id, i.member_id::float8 AS member_id, i.number, i.status, i.currency,
  i.subtotal_cents::float8 AS subtotal_cents, i.total_cents::float8 AS total_cents,
  i.amount_paid_cents::float8 AS amount_paid_cents, i.balance_cents::float8 AS balance_cents,
  ${iso("i.issued_at")} AS issued_at, i.due_on::text AS due_on, ${iso("i.voided_at")} AS voided_at, i.memo,
  ${iso("i.created_at")} AS created_at, ${iso("i.updated_at")} AS updated_at`

const INVOICE_FIND_SQL = `SELECT ${INVOICE_COLUMNS} FROM invoices i WHERE i.tenant_id = $1 AND i.id = $2`
const INVOICE_LOCK_SQL = `SELECT ${INVOICE_COLUMNS} FROM invoices i
  WHERE i.tenant_id = $1 AND i.id = $2 FOR UPDATE`

const INVOICE_INSERT_SQL = `${
  insertInto("invoices", [
    "tenant_id", "member_id", "number", "status", "currency", "subtotal_cents", "total_cents", "amount_paid_cents", "balance_cents",
    "issued_at", "due_on", "voided_at", "memo", "pay_token"
  ])
} RETURNING id`

const LINE_COLUMNS = ["tenant_id", "invoice_id", "position", "description", "unit_cents", "quantity"]
const linesInsertSql = (n: number) => insertInto("invoice_lines", LINE_COLUMNS, n)

const NEXT_NUMBER_SQL = `INSERT INTO invoice_sequences (tenant_id, last_number) VALUES ($1, 1)
  ON CONFLICT (tenant_id) DO UPDATE SET last_number = invoice_sequences.last_number + 1
  RETURNING last_number`

const ISSUE_SQL = `UPDATE invoices SET "number" = $1, "status" = $2, "issued_at" = $3, "due_on" = $4, "updated_at" = $5
  WHERE tenant_id = $6 AND id = $7 RETURNING id`

const PAY_SQL = `UPDATE invoices SET "amount_paid_cents" = $1, "balance_cents" = $2, "updated_at" = $3
  WHERE tenant_id = $4 AND id = $5 RETURNING id`
const PAY_IN_FULL_SQL = `UPDATE invoices SET "amount_paid_cents" = $1, "balance_cents" = $2, "status" = $3, "updated_at" = $4
  WHERE tenant_id = $5 AND id = $6 RETURNING id`

const PAYMENT_INSERT_SQL = `${
  insertInto("payments", ["tenant_id", "member_id", "method", "gateway", "amount_cents", "received_on", "reference", "notes", "invoice_id"])
} RETURNING id`

const PAYMENT_FIND_SQL = `SELECT p.id, p.member_id::float8 AS member_id, p.method, p.gateway, p.amount_cents::float8 AS amount_cents,
  p.received_on::text AS received_on, p.reference, ${iso("p.created_at")} AS created_at, ${iso("p.updated_at")} AS updated_at
  FROM payments p WHERE p.tenant_id = $1 AND p.id = $2`

const BEGIN = { name: "begin", text: "BEGIN" }
const COMMIT = { name: "commit", text: "COMMIT" }

type Queryable = Pick<pg.PoolClient, "query">
const run = async (db: Queryable, name: string, text: string, values: Array<unknown>): Promise<Array<any>> =>
  (await db.query({ name, text, values })).rows

// ---------------------------------------------------------------------------------------------
// Errors as the API answers them.

class HttpError extends Error {
  readonly status: number
  readonly body: unknown
  constructor(status: number, body: { readonly message: string; readonly errors?: Record<string, Array<string>> }) {
    super(body.message)
    this.status = status
    this.body = body
  }
}
const invalid = (field: string, message: string) => new HttpError(422, { message, errors: { [field]: [message] } })
const businessRule = (message: string) => new HttpError(422, { message })
const notFound = () => new HttpError(404, { message: "Not found." })

/** BEGIN ... COMMIT on one connection; ROLLBACK when `f` throws. */
const transaction = async <A>(f: (client: pg.PoolClient) => Promise<A>): Promise<A> => {
  const client = await pool.connect()
  try {
    await client.query(BEGIN)
    const result = await f(client)
    await client.query(COMMIT)
    return result
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {})
    throw error
  } finally {
    client.release()
  }
}

// ---------------------------------------------------------------------------------------------
// Auth.

interface Key {
  readonly keyId: number
  readonly tenantId: number
  readonly name: string
  readonly prefix: string
  readonly scopes: ReadonlyArray<string>
  readonly chamber: { readonly id: string; readonly name: string; readonly website: string | null }
}

const touched = new Map<number, number>()
const touch = (keyId: number) => {
  const now = Date.now()
  if (now - (touched.get(keyId) ?? 0) < 60_000) return
  touched.set(keyId, now)
  pool.query("UPDATE api_keys SET last_used_at = now() WHERE id = $1", [keyId]).catch(() => {})
}

const authenticate = async (req: IncomingMessage): Promise<Key | undefined> => {
  const header = req.headers.authorization ?? ""
  const plaintext = header.startsWith("Bearer ") ? header.slice(7) : ""
  if (!KEY_SHAPE.test(plaintext)) return undefined
  const hash = createHash("sha256").update(plaintext).digest("hex")
  const r = (await run(pool, "auth", AUTH_SQL, [hash]))[0]
  if (r === undefined) return undefined
  touch(Number(r.id))
  return {
    keyId: Number(r.id),
    tenantId: Number(r.tenant_id),
    name: r.name,
    prefix: r.prefix,
    scopes: r.scopes,
    chamber: { id: r.chamber_id, name: r.chamber_name, website: r.chamber_website }
  }
}

// ---------------------------------------------------------------------------------------------
// Bodies: read, UTF-8 checked, parsed, and each field checked by hand.

const utf8 = new TextDecoder("utf-8", { fatal: true })

const readJson = (req: IncomingMessage): Promise<unknown> =>
  new Promise((resolve, reject) => {
    if (!(req.headers["content-type"] ?? "").toLowerCase().includes("json")) {
      return reject(new HttpError(415, { message: "Unsupported media type: send the body as application/json." }))
    }
    const chunks: Array<Buffer> = []
    let size = 0
    req.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size <= MAX_BODY) chunks.push(chunk)
    })
    req.on("error", reject)
    req.on("end", () => {
      if (size > MAX_BODY) return reject(new HttpError(413, { message: "The request body is larger than 1 MiB." }))
      let text: string
      try {
        text = utf8.decode(Buffer.concat(chunks))
      } catch {
        return reject(invalid("body", "The body must be valid UTF-8 text."))
      }
      try {
        resolve(JSON.parse(text))
      } catch {
        reject(new HttpError(400, { message: "Bad request." }))
      }
    })
  })

const codePoints = (s: string) => {
  let n = 0
  for (const _ of s) n++
  return n
}

type Body = Record<string, unknown>

const textOf = (body: Body, field: string, max: number | undefined, options: { required?: boolean; filled?: boolean } = {}): string | null => {
  const value = body[field]
  if (value === undefined || value === null) {
    if (options.required === true) throw invalid(field, `The ${field} field is required.`)
    return null
  }
  if (typeof value !== "string") throw invalid(field, `The ${field} field must be a string.`)
  if (value.includes("\u0000")) throw invalid(field, `The ${field} field must not contain NUL characters.`)
  if (/\p{Cs}/u.test(value)) throw invalid(field, `The ${field} field must be valid Unicode text.`)
  if (max !== undefined && value.length > max && codePoints(value) > max) {
    throw invalid(field, `The ${field} field must not be greater than ${max} characters.`)
  }
  if (options.filled === true && value.trim() === "") throw invalid(field, `The ${field} field is required.`)
  return value
}

const oneOf = <L extends ReadonlyArray<string>>(body: Body, field: string, values: L): L[number] => {
  const value = body[field]
  if (value === undefined) throw invalid(field, `The ${field} field is required.`)
  if (typeof value !== "string" || !values.includes(value)) {
    throw invalid(field, `The selected ${field} is invalid (expected one of: ${values.join(", ")}).`)
  }
  return value
}

const validDate = (s: string) => {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s)
  if (m === null) return false
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])))
  return d.getUTCFullYear() === Number(m[1]) && d.getUTCMonth() === Number(m[2]) - 1 && d.getUTCDate() === Number(m[3])
}

const dateOf = (body: Body, field: string): string | null => {
  const value = body[field]
  if (value === undefined || value === null) return null
  if (typeof value !== "string" || !validDate(value)) throw invalid(field, `The ${field} field must be a valid date (YYYY-MM-DD).`)
  return value
}

const integerOf = (value: unknown, field: string, min: number, max: number): number => {
  if (typeof value !== "number" || !Number.isInteger(value)) throw invalid(field, `The ${field} field must be an integer.`)
  if (value < min) throw invalid(field, `The ${field} field must be at least ${min}.`)
  if (value > max) throw invalid(field, `The ${field} field must not be greater than ${max}.`)
  return value
}

const DOLLARS = /^(0|[1-9][0-9]*)(\.[0-9]{1,2})?$/
const dollarsOf = (value: unknown, field: string, min: number): number => {
  const m = typeof value === "string" ? DOLLARS.exec(value) : null
  if (m === null) throw invalid(field, `The ${field} field must be an amount in dollars such as 12.50 (digits, at most two decimal places, no sign).`)
  const cents = BigInt(m[1]!) * 100n + BigInt((m[2] ?? ".").slice(1).padEnd(2, "0"))
  if (cents > BigInt(MAX_CENTS)) throw invalid(field, `The ${field} field must not be greater than 90071992547409.91.`)
  if (cents < BigInt(min)) throw invalid(field, `The ${field} field must be at least ${min} cents.`)
  return Number(cents)
}

const bodyObject = (body: unknown): Body => {
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw invalid("body", "The body must be a JSON object.")
  return body as Body
}

// ---------------------------------------------------------------------------------------------
// Rows as the API shows them.

const toMember = (r: any) => ({
  id: Number(r.id),
  attributes: {
    name: r.name,
    slug: r.slug,
    status: r.status,
    industry: r.industry,
    secondary_industries: r.secondary_industries,
    slogan: r.slogan,
    about: r.about,
    website: r.website,
    email: r.email,
    phone: r.phone,
    address_line1: r.address_line1,
    address_line2: r.address_line2,
    city: r.city,
    state: r.state,
    zip: r.zip,
    member_since: r.member_since,
    employee_count: r.employee_count === null ? null : Number(r.employee_count),
    directory_visible: r.directory_visible,
    custom_fields: r.custom_fields
  },
  created_at: r.created_at,
  updated_at: r.updated_at
})

const toInvoice = (r: any) => ({
  id: Number(r.id),
  attributes: {
    member_id: r.member_id,
    number: r.number,
    status: r.status,
    currency: r.currency,
    subtotal_cents: r.subtotal_cents,
    total_cents: r.total_cents,
    amount_paid_cents: r.amount_paid_cents,
    balance_cents: r.balance_cents,
    issued_at: r.issued_at,
    due_on: r.due_on,
    voided_at: r.voided_at,
    memo: r.memo
  },
  created_at: r.created_at,
  updated_at: r.updated_at
})

const toPayment = (r: any) => ({
  id: Number(r.id),
  attributes: {
    member_id: r.member_id,
    method: r.method,
    gateway: r.gateway,
    amount_cents: r.amount_cents,
    received_on: r.received_on,
    reference: r.reference
  },
  created_at: r.created_at,
  updated_at: r.updated_at
})

const send = (res: ServerResponse, status: number, body: unknown) => {
  const text = JSON.stringify(body)
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
  res.end(text)
}

/** As ours: a well-formed incoming X-Request-Id is kept, otherwise a new one; every response carries it. */
const WELL_FORMED_ID = /^[A-Za-z0-9._:-]{1,128}$/
const requestId = (req: IncomingMessage) => {
  const incoming = req.headers["x-request-id"]
  return typeof incoming === "string" && WELL_FORMED_ID.test(incoming) ? incoming : randomUUID()
}

/** As ours: only canonical paths reach the routes; two Authorization headers are no key. */
const NOT_CANONICAL = /[^A-Za-z0-9/._~-]/
const authorizationHeaders = (req: IncomingMessage) => {
  let count = 0
  for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i]!.toLowerCase() === "authorization") count++
  return count
}

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
/** `evt_` + 24 random base62 characters (rejection sampling), as core's newEventId. */
const newEventId = () => {
  let out = ""
  const buf = new Uint8Array(48)
  while (out.length < 24) {
    getRandomValues(buf)
    for (const byte of buf) if (byte < 248 && out.length < 24) out += BASE62[byte % 62]
  }
  return `evt_${out}`
}

const outbox = (db: Queryable, tenantId: number, type: string, data: unknown) =>
  run(db, "outbox", OUTBOX_SQL, [newEventId(), tenantId, type, JSON.stringify(data)])

const tenantRow = async (db: Queryable, tenantId: number) => {
  const tenant = (await run(db, "tenant", TENANT_SQL, [tenantId]))[0]
  if (tenant === undefined) throw new Error(`no tenant ${tenantId}`)
  return tenant
}

// ---------------------------------------------------------------------------------------------
// Endpoints.

const members = async (key: Key, query: URLSearchParams) => {
  const page = query.has("page") ? Number(query.get("page")) : 1
  if (!Number.isInteger(page) || page < 1) throw invalid("page", "The page field must be an integer of at least 1.")
  const { rows, total } = page === 1 ? await firstPage(key.tenantId) : await laterPage(key.tenantId, page)
  return {
    data: rows.map(toMember),
    meta: { current_page: page, per_page: PER_PAGE, total, last_page: Math.max(1, Math.ceil(total / PER_PAGE)) }
  }
}

const member = async (key: Key, id: number) => {
  const row = (await run(pool, "member-find", MEMBER_FIND_SQL, [key.tenantId, id]))[0]
  if (row === undefined) throw notFound()
  return { data: toMember(row) }
}

const firstPage = async (tenantId: number) => {
  const rows = await run(pool, "members-first", FIRST_PAGE_SQL, [tenantId, tenantId, PER_PAGE])
  return { rows, total: rows.length === 0 ? 0 : Number(rows[0].total_count) }
}

/** As PageSql.countedPage: the total, then the page from the nearer end, read again (up to 3 times) if the total moved. */
const laterPage = async (tenantId: number, page: number) => {
  const offset = (page - 1) * PER_PAGE
  const totalNow = async () => Number((await run(pool, "members-total", TOTAL_SQL, [tenantId]))[0].total_count)
  let total = await totalNow()
  for (let read = 1; ; read++) {
    if (offset >= total) return { rows: [], total }
    const after = total - offset - PER_PAGE
    const reversed = after < offset
    const rows = reversed
      ? await run(pool, "members-later-reversed", LATER_PAGE_REVERSED_SQL, [tenantId, tenantId, Math.min(PER_PAGE, total - offset), Math.max(0, after)])
      : await run(pool, "members-later", LATER_PAGE_SQL, [tenantId, tenantId, PER_PAGE, offset])
    const seen = rows.length === 0 ? await totalNow() : Number(rows[0].total_count)
    if ((seen === total && rows.length > 0) || read === 3) return { rows, total: seen }
    total = seen
  }
}

const me = (key: Key) => ({
  chamber: key.chamber,
  key: { name: key.name, prefix: key.prefix, scopes: key.scopes, can_write: key.scopes.some((s) => s.endsWith(":write")) },
  label: `${key.chamber.name} (${key.name})`
})

const MEMBER_STATUSES = ["active", "pending", "lapsed", "former"] as const
const SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

/** The stored values of a new member: what the body gives, else null (directory_visible: true). */
const memberValues = (body: Body) => {
  const slug = textOf(body, "slug", 255)
  if (slug !== null && !SLUG.test(slug)) throw invalid("slug", "The slug field must be lower-case letters and digits in groups joined by single hyphens.")
  const email = textOf(body, "email", 255)
  if (email !== null && !EMAIL.test(email)) throw invalid("email", "The email field must be a valid email address.")
  const secondary = body.secondary_industries
  if (secondary !== undefined && secondary !== null) {
    if (!Array.isArray(secondary)) throw invalid("secondary_industries", "The secondary_industries field must be an array.")
    if (secondary.length > 50) throw invalid("secondary_industries", "The secondary_industries field must not have more than 50 items.")
    secondary.forEach((_, i) => textOf(secondary as unknown as Body, String(i), 255, { required: true }))
  }
  const employees = body.employee_count
  const visible = body.directory_visible
  if (visible !== undefined && visible !== null && typeof visible !== "boolean") {
    throw invalid("directory_visible", "The directory_visible field must be true or false.")
  }
  return {
    name: textOf(body, "name", 255, { required: true, filled: true })!,
    slug,
    status: oneOf(body, "status", MEMBER_STATUSES),
    industry: textOf(body, "industry", 255),
    secondary_industries: secondary === undefined || secondary === null ? null : (secondary as Array<string>),
    slogan: textOf(body, "slogan", 160),
    about: textOf(body, "about", 5000),
    website: textOf(body, "website", 255),
    email,
    phone: textOf(body, "phone", 50),
    address_line1: textOf(body, "address_line1", 255),
    address_line2: textOf(body, "address_line2", 255),
    city: textOf(body, "city", 255),
    state: textOf(body, "state", 50),
    zip: textOf(body, "zip", 20),
    member_since: dateOf(body, "member_since"),
    employee_count: employees === undefined || employees === null ? null : integerOf(employees, "employee_count", 0, 1_000_000),
    directory_visible: visible === undefined || visible === null ? true : visible,
    custom_fields: {}
  }
}

/** Core's slugify and uniqueSlug (packages/core/src/member/Member.ts). */
const slugify = (name: string): string => {
  const base = name.normalize("NFKD").replace(/[\u0300-\u036f]/g, "").toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "")
    .slice(0, 240).replace(/-+$/g, "")
  return base === "" ? "member" : base
}
const uniqueSlug = (base: string, taken: ReadonlySet<string>): string => {
  if (!taken.has(base)) return base
  for (let n = 2; ; n++) if (!taken.has(`${base}-${n}`)) return `${base}-${n}`
}
const likeEscape = (text: string) => text.replace(/[\\%_]/g, "\\$&")

const createMember = async (key: Key, body: Body) => {
  const values = memberValues(body)
  const insert = (client: pg.PoolClient, slug: string | null) =>
    run(client, "member-insert", MEMBER_INSERT_SQL, [
      key.tenantId, values.name, slug, values.status, values.industry,
      values.secondary_industries === null ? null : JSON.stringify(values.secondary_industries),
      values.slogan, values.about, values.website, values.email, values.phone, values.address_line1, values.address_line2,
      values.city, values.state, values.zip, values.member_since, values.employee_count, values.directory_visible,
      JSON.stringify(values.custom_fields)
    ])
  return transaction(async (client) => {
    let inserted: Array<any>
    if (values.slug !== null) {
      inserted = await insert(client, values.slug)
      if (inserted.length === 0) throw invalid("slug", "The slug has already been taken.")
    } else {
      const base = slugify(values.name)
      const taken = new Set((await run(client, "slugs", SLUGS_SQL, [key.tenantId, base, likeEscape(base) + "-%"])).map((r) => r.slug as string))
      for (let attempt = 1; ; attempt++) {
        const slug = uniqueSlug(base, taken)
        inserted = await insert(client, slug)
        if (inserted.length > 0) break
        if (attempt === 100) throw new Error(`no free slug for ${values.name}`)
        taken.add(slug)
      }
    }
    const member = toMember((await run(client, "member-find", MEMBER_FIND_SQL, [key.tenantId, Number(inserted[0].id)]))[0])
    await outbox(client, key.tenantId, "member.created", member)
    return member
  })
}

const createInvoice = async (key: Key, body: Body) => {
  const member_id = integerOf(body.member_id ?? null, "member_id", 1, MAX_CENTS)
  const given = body.lines
  if (!Array.isArray(given)) throw invalid("lines", "The lines field must be an array.")
  if (given.length < 1) throw invalid("lines", "The lines field must have at least 1 item.")
  if (given.length > 500) throw invalid("lines", "The lines field must not have more than 500 items.")
  const lines = given.map((line: unknown, i) => {
    const l = bodyObject(line)
    return {
      description: textOf(l, "description", 255, { required: true, filled: true })!,
      unit_cents: dollarsOf(l.unit, `lines.${i}.unit`, 0),
      quantity: l.quantity === undefined || l.quantity === null ? 1 : integerOf(l.quantity, `lines.${i}.quantity`, 1, MAX_CENTS)
    }
  })
  const memo = textOf(body, "memo", 2000)
  const subtotal = lines.reduce((sum, l) => sum + BigInt(l.unit_cents) * BigInt(l.quantity), 0n)
  if (subtotal > BigInt(MAX_CENTS)) throw invalid("lines", "The invoice total must not be greater than 90071992547409.91.")
  if ((await run(pool, "member-find", MEMBER_FIND_SQL, [key.tenantId, member_id])).length === 0) {
    throw invalid("member_id", "The selected member id is invalid.")
  }
  const tenant = await tenantRow(pool, key.tenantId)
  const total = Number(subtotal)
  return transaction(async (client) => {
    const id = Number((await run(client, "invoice-insert", INVOICE_INSERT_SQL, [
      key.tenantId, member_id, null, "draft", tenant.currency, total, total, 0, total, null, null, null, memo,
      randomBytes(24).toString("base64url")
    ]))[0].id)
    const invoice = toInvoice((await run(client, "invoice-find", INVOICE_FIND_SQL, [key.tenantId, id]))[0])
    const values: Array<unknown> = []
    lines.forEach((l, position) => values.push(key.tenantId, id, position, l.description, l.unit_cents, l.quantity))
    await run(client, `lines-${lines.length}`, linesInsertSql(lines.length), values)
    return invoice
  })
}

const lockInvoice = async (client: pg.PoolClient, tenantId: number, id: number) => {
  const row = (await run(client, "invoice-lock", INVOICE_LOCK_SQL, [tenantId, id]))[0]
  if (row === undefined) throw notFound()
  return row
}

const dateAfter = (at: Date, days: number) =>
  new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate() + days)).toISOString().slice(0, 10)

const issueInvoice = (key: Key, id: number) =>
  transaction(async (client) => {
    const current = await lockInvoice(client, key.tenantId, id)
    if (current.status !== "draft") throw businessRule(`Only a draft invoice can be issued; this invoice is ${current.status}.`)
    const tenant = await tenantRow(client, key.tenantId)
    const n = Number((await run(client, "next-number", NEXT_NUMBER_SQL, [key.tenantId]))[0].last_number)
    const now = new Date()
    const settled = current.balance_cents === 0
    await run(client, "invoice-issue", ISSUE_SQL, [
      `${tenant.invoice_prefix}${String(n).padStart(6, "0")}`, settled ? "paid" : "open", now.toISOString(), dateAfter(now, tenant.net_terms),
      new Date(), key.tenantId, id
    ])
    const invoice = toInvoice((await run(client, "invoice-find", INVOICE_FIND_SQL, [key.tenantId, id]))[0])
    await outbox(client, key.tenantId, "invoice.issued", invoice)
    if (settled) await outbox(client, key.tenantId, "invoice.paid", invoice)
    return invoice
  })

const PAYMENT_METHODS = ["card", "check", "cash", "ach", "comp", "refund", "other"] as const

const formatCents = (cents: number) => `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, "0")}`

const recordPayment = async (key: Key, id: number, body: Body) => {
  const method = oneOf(body, "method", PAYMENT_METHODS)
  if (body.amount === undefined) throw invalid("amount", "The amount field is required.")
  const amount = dollarsOf(body.amount, "amount", 1)
  const received_on = dateOf(body, "received_on")
  const reference = textOf(body, "reference", 255)
  const notes = textOf(body, "notes", 2000)
  return transaction(async (client) => {
    const invoice = await lockInvoice(client, key.tenantId, id)
    if (method === "refund") throw businessRule("A refund cannot be recorded as a payment; use card, check, cash, ach, comp or other.")
    if (invoice.status !== "open") throw businessRule(`This invoice is ${invoice.status}; only an open invoice can take a payment.`)
    if (amount > invoice.balance_cents) {
      throw businessRule(
        `The payment of ${formatCents(amount)} ${invoice.currency} is more than the invoice's outstanding balance of ${
          formatCents(invoice.balance_cents)
        } ${invoice.currency} (balance_cents: ${invoice.balance_cents}).`
      )
    }
    const paymentId = Number((await run(client, "payment-insert", PAYMENT_INSERT_SQL, [
      key.tenantId, invoice.member_id, method, null, amount, received_on, reference, notes, id
    ]))[0].id)
    const payment = toPayment((await run(client, "payment-find", PAYMENT_FIND_SQL, [key.tenantId, paymentId]))[0])
    const balance = invoice.balance_cents - amount
    const paid = invoice.amount_paid_cents + amount
    if (balance === 0) await run(client, "invoice-pay-in-full", PAY_IN_FULL_SQL, [paid, balance, "paid", new Date(), key.tenantId, id])
    else await run(client, "invoice-pay", PAY_SQL, [paid, balance, new Date(), key.tenantId, id])
    const updated = toInvoice((await run(client, "invoice-find", INVOICE_FIND_SQL, [key.tenantId, id]))[0])
    if (balance === 0) await outbox(client, key.tenantId, "invoice.paid", updated)
    return payment
  })
}

// ---------------------------------------------------------------------------------------------
// Routing.

const ROW_ID = /^[1-9][0-9]{0,15}$/
const MEMBER_PATH = /^\/api\/v1\/members\/([^/]+)$/
const INVOICE_ACTION = /^\/api\/v1\/invoices\/([^/]+)\/(issue|payments)$/

type Route =
  | { readonly name: "members" | "me" | "member-create" | "invoice-create"; readonly id?: undefined }
  | { readonly name: "member" | "invoice-issue" | "payment-record"; readonly id: number }

const route = (method: string | undefined, path: string): Route | undefined => {
  if (method === "GET") {
    if (path === "/api/v1/members" || path === "/api/v1/members/") return { name: "members" }
    if (path === "/api/v1/me") return { name: "me" }
    const one = MEMBER_PATH.exec(path)
    // A path id that is no positive integer names no row: 404, like a missing one.
    if (one !== null && one[1] !== "search") return { name: "member", id: ROW_ID.test(one[1]!) ? Number(one[1]) : 0 }
    return undefined
  }
  if (method !== "POST") return undefined
  if (path === "/api/v1/members") return { name: "member-create" }
  if (path === "/api/v1/invoices") return { name: "invoice-create" }
  const m = INVOICE_ACTION.exec(path)
  if (m === null) return undefined
  // A path id that is no positive integer names no row: 404, like a missing one.
  const id = ROW_ID.test(m[1]!) ? Number(m[1]) : 0
  return { name: m[2] === "issue" ? "invoice-issue" : "payment-record", id }
}

const SCOPES: Record<Route["name"], string | undefined> = {
  members: "members:read",
  member: "members:read",
  me: undefined,
  "member-create": "members:write",
  "invoice-create": "invoices:write",
  "invoice-issue": "invoices:write",
  "payment-record": "payments:write"
}

const server = createServer(async (req, res) => {
  res.setHeader("x-request-id", requestId(req))
  try {
    const [path = "/", search = ""] = (req.url ?? "/").split("?")
    const target = NOT_CANONICAL.test(path) ? undefined : route(req.method, path)
    if (target === undefined) return send(res, 404, { message: "Not found." })
    if (Number(req.headers["content-length"] ?? 0) > MAX_BODY) return send(res, 413, { message: "The request body is larger than 1 MiB." })
    const key = authorizationHeaders(req) > 1 ? undefined : await authenticate(req)
    if (key === undefined) return send(res, 401, { message: "Unauthenticated." })
    const scope = SCOPES[target.name]
    if (scope !== undefined && !key.scopes.includes(scope)) return send(res, 403, { message: "This action is unauthorized." })
    switch (target.name) {
      case "me":
        return send(res, 200, me(key))
      case "members":
        return send(res, 200, await members(key, new URLSearchParams(search)))
      case "member":
        return send(res, 200, await member(key, target.id))
      case "member-create":
        return send(res, 201, { data: await createMember(key, bodyObject(await readJson(req))) })
      case "invoice-create":
        return send(res, 201, { data: await createInvoice(key, bodyObject(await readJson(req))) })
      case "invoice-issue":
        return send(res, 200, { data: await issueInvoice(key, target.id) })
      case "payment-record":
        return send(res, 201, { data: await recordPayment(key, target.id, bodyObject(await readJson(req))) })
    }
  } catch (error) {
    if (error instanceof HttpError) return send(res, error.status, error.body)
    console.error(error)
    if (!res.headersSent) send(res, 500, { message: "Server error." })
  }
})

server.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
  const address = server.address() as { port: number }
  console.log(`${LISTENING} ${address.port}`)
})

const stop = () => {
  server.close(() => pool.end().finally(() => process.exit(0)))
  server.closeAllConnections()
}
process.on("SIGTERM", stop)
process.on("SIGINT", stop)
