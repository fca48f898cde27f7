/**
 * The bench's raw baseline (bench/README.md "What it does"): node:http + `pg` doing our server's
 * work by hand, with the product's statements, prepared, in the same transactions (run.ts checks
 * that through sql-trace.ts). Pool of BENCH_POOL_SIZE connections. Prints `BENCH_LISTENING <port>`.
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

// The product's statements, written out.
const iso = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`
const AUTH_SQL = `SELECT k.id, k.tenant_id, k.name, k.prefix, k.scopes, k.daily_limit, t.public_id AS chamber_id, t.name AS chamber_name, t.website AS
  chamber_website FROM api_keys k JOIN tenants t ON t.id = k.tenant_id WHERE k.key_hash = $1 AND k.revoked_at IS NULL`
const MEMBER_COLUMNS = `m.id, m.name, m.slug, m.status, m.industry, m.secondary_industries, m.slogan, m.about, m.website, m.email, m.phone,
  m.address_line1, m.address_line2, m.city, m.state, m.zip, m.member_since::text AS member_since, m.employee_count, m.directory_visible, (SELECT
  coalesce(jsonb_object_agg(e.key, e.value), '{}'::jsonb) FROM jsonb_each(m.custom_fields) e JOIN custom_field_definitions d ON d.tenant_id =
  m.tenant_id AND d.resource = 'member' AND d.api_visible AND d.key = e.key) AS custom_fields, ${iso("m.created_at")} AS created_at,
  ${iso("m.updated_at")} AS updated_at`

/** Page 1 with the chamber's kept member count beside its rows. */
const FIRST_PAGE_SQL = `SELECT (SELECT coalesce(sum(c.members), 0)::int8 FROM member_counts c WHERE c.tenant_id = $1) AS total_count,
  ${MEMBER_COLUMNS} FROM members m WHERE m.tenant_id = $2 ORDER BY lower(m.name) COLLATE "C" ASC, m.id ASC LIMIT $3`
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
// Writes answer their row through the read's select list, as the product's (pg-adapter ResourceSql.ts).
const MEMBER_INSERT_SQL = `${insertInto("members AS m", ["tenant_id", ...MEMBER_FIELDS])} ON CONFLICT (tenant_id, slug) DO NOTHING RETURNING ${MEMBER_COLUMNS}`
// The event, one delivery per active subscription listing its kind (held behind a pending one of
// the same resource, which is marked followed: ruling 32), and the NOTIFY, in one statement:
// pg-adapter OutboxSql.ts's.
const OUTBOX_SQL = `
  WITH e AS ( INSERT INTO outbox_events (event_id, tenant_id, type, payload) VALUES ($1, $2, $3, $4::jsonb) RETURNING * ),
  hooks AS MATERIALIZED ( SELECT s.id FROM e
    JOIN webhook_subscriptions s ON s.tenant_id = e.tenant_id AND s.active AND s.events @> jsonb_build_array(e.type) ORDER BY s.id ),
  ahead AS MATERIALIZED ( SELECT h.id AS hook_id, p.id, p.followed FROM hooks h CROSS JOIN LATERAL ( SELECT p.id, p.followed FROM webhook_deliveries p
    WHERE p.hook_id = h.id AND p.resource = $5 AND p.status = 'pending' ORDER BY p.event_id LIMIT 1 FOR KEY SHARE ) p ),
  marked AS ( UPDATE webhook_deliveries SET followed = true WHERE id = ANY(ARRAY(SELECT id FROM ahead WHERE NOT followed)) ),
  d AS ( INSERT INTO webhook_deliveries (tenant_id, event_id, hook_id, resource, held)
    SELECT e.tenant_id, e.id, h.id, $6, ahead.hook_id IS NOT NULL FROM e CROSS JOIN hooks h LEFT JOIN ahead ON ahead.hook_id = h.id RETURNING 1 )
  -- Relays listening are told on commit (webhook-relay Relay.ts); without a delivery, nothing to tell.
  SELECT e.*, (SELECT pg_notify('chamber_deliveries', '') FROM d LIMIT 1) IS NULL AS quiet FROM e`
const TENANT_SQL = `SELECT * FROM tenants WHERE id = $1`
const INVOICE_COLUMNS = `i.id, i.member_id::float8 AS member_id, i.number, i.status, i.currency, i.subtotal_cents::float8 AS subtotal_cents,
  i.total_cents::float8 AS total_cents, i.amount_paid_cents::float8 AS amount_paid_cents, i.balance_cents::float8 AS balance_cents,
  ${iso("i.issued_at")} AS issued_at, i.due_on::text AS due_on, ${iso("i.voided_at")} AS voided_at, i.memo, ${iso("i.created_at")} AS created_at,
  ${iso("i.updated_at")} AS updated_at`
// Locked: an invoice stores nothing it does not show, so one list, as the product's.
const INVOICE_LOCK_SQL = `SELECT ${INVOICE_COLUMNS} FROM invoices i WHERE i.tenant_id = $1 AND i.id = $2 FOR UPDATE`
const INVOICE_INSERT_SQL = `${insertInto("invoices AS i", [
  "tenant_id", "member_id", "number", "status", "currency", "subtotal_cents", "total_cents", "amount_paid_cents", "balance_cents", "issued_at", "due_on",
  "voided_at", "memo", "pay_token"
])} RETURNING ${INVOICE_COLUMNS}`
const LINE_COLUMNS = ["tenant_id", "invoice_id", "position", "description", "unit_cents", "quantity"]
const NEXT_NUMBER_SQL = `INSERT INTO invoice_sequences (tenant_id, last_number) VALUES ($1, 1) ON CONFLICT (tenant_id) DO UPDATE SET last_number =
  invoice_sequences.last_number + 1 RETURNING last_number`
// updated_at is the database's (migration 0014's trigger), as for the product.
const ISSUE_SQL = `UPDATE invoices AS i SET "number" = $1, "status" = $2, "issued_at" = $3, "due_on" = $4 WHERE i.tenant_id = $5 AND i.id = $6
  RETURNING ${INVOICE_COLUMNS}`
const PAY_SQL = `UPDATE invoices AS i SET "amount_paid_cents" = $1, "balance_cents" = $2 WHERE i.tenant_id = $3 AND i.id = $4 RETURNING ${INVOICE_COLUMNS}`
const PAY_IN_FULL_SQL = `UPDATE invoices AS i SET "amount_paid_cents" = $1, "balance_cents" = $2, "status" = $3 WHERE i.tenant_id = $4 AND i.id = $5
  RETURNING ${INVOICE_COLUMNS}`
const PAYMENT_INSERT_SQL = `${insertInto("payments AS p", ["tenant_id", "member_id", "method", "gateway", "amount_cents", "received_on", "reference", "notes", "invoice_id"])}
  RETURNING p.id, p.member_id::float8 AS member_id, p.method, p.gateway, p.amount_cents::float8 AS amount_cents, p.received_on::text AS received_on,
  p.reference, ${iso("p.created_at")} AS created_at, ${iso("p.updated_at")} AS updated_at`
type Queryable = Pick<pg.PoolClient, "query">
const run = async (db: Queryable, name: string, text: string, values: Array<unknown>): Promise<Array<any>> =>
  (await db.query({ name, text, values })).rows

/** BEGIN ... COMMIT on one connection; ROLLBACK when `f` throws. */
const transaction = async <A>(f: (client: pg.PoolClient) => Promise<A>): Promise<A> => {
  const client = await pool.connect()
  try {
    await client.query({ name: "begin", text: "BEGIN" })
    const result = await f(client)
    await client.query({ name: "commit", text: "COMMIT" })
    return result
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {})
    throw error
  } finally {
    client.release()
  }
}

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
/** `evt_` + 24 random base62 characters (rejection sampling), as the product makes an event id. */
const newEventId = () => {
  let out = ""
  const buf = new Uint8Array(48)
  while (out.length < 24) {
    getRandomValues(buf)
    for (const byte of buf) if (byte < 248 && out.length < 24) out += BASE62[byte % 62]
  }
  return `evt_${out}`
}

/** The resource an event is about, as the product keys it (`members/12`). */
const resourceOf = (type: string, data: unknown) =>
  `${type === "event.registration.created" ? "registrations" : `${type.split(".")[0]}s`}/${(data as { readonly id: unknown }).id}`
const outbox = (db: Queryable, tenantId: number, type: string, data: unknown) =>
  run(db, "outbox", OUTBOX_SQL, [newEventId(), tenantId, type, JSON.stringify(data), resourceOf(type, data), resourceOf(type, data)])
const tenantRow = async (db: Queryable, tenantId: number) => (await run(db, "tenant", TENANT_SQL, [tenantId]))[0]

// Errors, and bodies checked by hand.
class HttpError extends Error { status = 500 }
const fail = (status: number, message: string) => Object.assign(new HttpError(message), { status })
const invalid = (field: string, rule: string) => fail(422, `The ${field} field ${rule}.`)
const found = (row: any) => {
  if (row === undefined) throw fail(404, "Not found.")
  return row
}

const utf8 = new TextDecoder("utf-8", { fatal: true })
type Body = Record<string, unknown>
const readBody = (req: IncomingMessage): Promise<Body> =>
  new Promise((resolve, reject) => {
    if (!(req.headers["content-type"] ?? "").toLowerCase().includes("json")) return reject(fail(415, "Unsupported media type."))
    const chunks: Array<Buffer> = []
    let size = 0
    req.on("data", (chunk: Buffer) => void ((size += chunk.length) <= MAX_BODY && chunks.push(chunk)))
    req.on("error", reject)
    req.on("end", () => {
      if (size > MAX_BODY) return reject(fail(413, "The request body is larger than 1 MiB."))
      try {
        const body = JSON.parse(utf8.decode(Buffer.concat(chunks)))
        if (typeof body !== "object" || body === null || Array.isArray(body)) return reject(invalid("body", "must be a JSON object"))
        resolve(body)
      } catch {
        reject(fail(400, "Bad request."))
      }
    })
  })

/** A string of at most `max` characters, no NUL, no lone surrogate; null when absent unless required. */
const textOf = (body: Body, field: string, max: number, required = false): string | null => {
  const value = body[field]
  if (value === undefined || value === null) {
    if (required) throw invalid(field, "is required")
    return null
  }
  if (typeof value !== "string") throw invalid(field, "must be a string")
  if (value.includes("\u0000") || /\p{Cs}/u.test(value)) throw invalid(field, "must be valid text")
  if (value.length > max && [...value].length > max) throw invalid(field, `must not be greater than ${max} characters`)
  if (required && value.trim() === "") throw invalid(field, "is required")
  return value
}

const oneOf = <L extends ReadonlyArray<string>>(body: Body, field: string, values: L): L[number] => {
  const value = body[field]
  if (typeof value !== "string" || !values.includes(value)) throw invalid(field, `must be one of: ${values.join(", ")}`)
  return value
}

const dateOf = (body: Body, field: string): string | null => {
  const value = body[field]
  if (value === undefined || value === null) return null
  const m = typeof value === "string" ? /^(\d{4})-(\d{2})-(\d{2})$/.exec(value) : null
  const d = m === null ? undefined : new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])))
  if (d === undefined || d.toISOString().slice(0, 10) !== value) throw invalid(field, "must be a valid date (YYYY-MM-DD)")
  return value as string
}

const integerOf = (value: unknown, field: string, min: number, max: number): number => {
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) throw invalid(field, `must be an integer from ${min} to ${max}`)
  return value
}

const DOLLARS = /^(0|[1-9][0-9]*)(\.[0-9]{1,2})?$/
/** A dollar string such as 12.50, exactly in cents. */
const dollarsOf = (value: unknown, field: string, min: number): number => {
  const m = typeof value === "string" ? DOLLARS.exec(value) : null
  if (m === null) throw invalid(field, "must be an amount in dollars such as 12.50")
  const cents = BigInt(m[1]!) * 100n + BigInt((m[2] ?? ".").slice(1).padEnd(2, "0"))
  if (cents > BigInt(MAX_CENTS) || cents < BigInt(min)) throw invalid(field, "is out of range")
  return Number(cents)
}

// Rows as the API shows them.
// A literal, as a hand-written server builds it: a page of such objects serializes fastest.
const toMember = (r: any) => ({
  id: Number(r.id),
  attributes: {
    name: r.name, slug: r.slug, status: r.status, industry: r.industry, secondary_industries: r.secondary_industries, slogan: r.slogan,
    about: r.about, website: r.website, email: r.email, phone: r.phone, address_line1: r.address_line1, address_line2: r.address_line2,
    city: r.city, state: r.state, zip: r.zip, member_since: r.member_since, employee_count: r.employee_count === null ? null : Number(r.employee_count),
    directory_visible: r.directory_visible, custom_fields: r.custom_fields
  },
  created_at: r.created_at,
  updated_at: r.updated_at
})

/** An invoice or a payment: one object, off the write path's many statements, built from its columns. */
const resource = (attributes: ReadonlyArray<string>) => (r: any) =>
  ({ id: Number(r.id), attributes: Object.fromEntries(attributes.map((name) => [name, r[name]])), created_at: r.created_at, updated_at: r.updated_at })
const toInvoice = resource([
  "member_id", "number", "status", "currency", "subtotal_cents", "total_cents", "amount_paid_cents", "balance_cents", "issued_at", "due_on", "voided_at", "memo"
])
const toPayment = resource(["member_id", "method", "gateway", "amount_cents", "received_on", "reference"])

// Auth.
const touched = new Map<number, number>()
const touch = (keyId: number) => {
  const now = Date.now()
  if (now - (touched.get(keyId) ?? 0) < 60_000) return
  touched.set(keyId, now)
  pool.query("UPDATE api_keys SET last_used_at = now() WHERE id = $1", [keyId]).catch(() => {})
}

const authenticate = async (req: IncomingMessage) => {
  const header = req.headers.authorization ?? ""
  const plaintext = header.startsWith("Bearer ") ? header.slice(7) : ""
  if (!KEY_SHAPE.test(plaintext)) return undefined
  const r = (await run(pool, "auth", AUTH_SQL, [createHash("sha256").update(plaintext).digest("hex")]))[0]
  if (r === undefined) return undefined
  touch(Number(r.id))
  const chamber: { id: string; name: string; website: string | null } = { id: r.chamber_id, name: r.chamber_name, website: r.chamber_website }
  return { keyId: Number(r.id), tenantId: Number(r.tenant_id), name: r.name as string, prefix: r.prefix as string, scopes: r.scopes as Array<string>, chamber }
}
type Key = NonNullable<Awaited<ReturnType<typeof authenticate>>>

// Endpoints.
const membersPage = async (key: Key, search: string) => {
  if ((new URLSearchParams(search).get("page") ?? "1") !== "1") throw fail(404, "The baseline serves page 1 only.")
  const rows = await run(pool, "members-first", FIRST_PAGE_SQL, [key.tenantId, key.tenantId, PER_PAGE])
  const total = rows.length === 0 ? 0 : Number(rows[0].total_count)
  return { data: rows.map(toMember), meta: { current_page: 1, per_page: PER_PAGE, total, last_page: Math.max(1, Math.ceil(total / PER_PAGE)) } }
}

const member = async (key: Key, id: number) =>
  ({ data: toMember(found((await run(pool, "member-find", MEMBER_FIND_SQL, [key.tenantId, id]))[0])) })

const MEMBER_STATUSES = ["active", "pending", "lapsed", "former"] as const
const TEXT_LIMITS: ReadonlyArray<readonly [string, number]> = [
  ["industry", 255], ["slogan", 160], ["about", 5000], ["website", 255], ["phone", 50], ["address_line1", 255], ["address_line2", 255], ["city", 255], ["state", 50], ["zip", 20]
]

/** The stored values of a new member: what the body gives, else null (directory_visible: true). */
const memberValues = (body: Body): Record<(typeof MEMBER_FIELDS)[number], unknown> => {
  const slug = textOf(body, "slug", 255)
  if (slug !== null && !/^[a-z0-9]+(?:-[a-z0-9]+)*$/.test(slug)) throw invalid("slug", "must be lower-case words joined by hyphens")
  const email = textOf(body, "email", 255)
  if (email !== null && !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) throw invalid("email", "must be a valid email address")
  const secondary = body.secondary_industries ?? null
  if (secondary !== null && (!Array.isArray(secondary) || secondary.length > 50)) throw invalid("secondary_industries", "must be an array of at most 50")
  if (secondary !== null) secondary.forEach((_, i) => textOf(secondary as unknown as Body, String(i), 255, true))
  const visible = body.directory_visible ?? null
  if (visible !== null && typeof visible !== "boolean") throw invalid("directory_visible", "must be true or false")
  return {
    name: textOf(body, "name", 255, true), slug, status: oneOf(body, "status", MEMBER_STATUSES),
    ...Object.fromEntries(TEXT_LIMITS.map(([field, max]) => [field, textOf(body, field, max)])),
    secondary_industries: secondary === null ? null : JSON.stringify(secondary), email, member_since: dateOf(body, "member_since"),
    employee_count: (body.employee_count ?? null) === null ? null : integerOf(body.employee_count, "employee_count", 0, 1_000_000),
    directory_visible: visible ?? true, custom_fields: "{}"
  } as Record<(typeof MEMBER_FIELDS)[number], unknown>
}

/** The product's slug: the name's letters and digits, accents dropped, joined by hyphens. */
const slugify = (name: string): string => {
  const base = name.normalize("NFKD").replace(/[\u0300-\u036f]/g, "").toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "")
    .slice(0, 240).replace(/-+$/g, "")
  return base === "" ? "member" : base
}

const createMember = async (key: Key, body: Body) => {
  const values = memberValues(body)
  const insert = (client: pg.PoolClient, slug: string) =>
    run(client, "member-insert", MEMBER_INSERT_SQL, [key.tenantId, ...MEMBER_FIELDS.map((field) => (field === "slug" ? slug : values[field]))])
  return transaction(async (client) => {
    let inserted: Array<any>
    if (values.slug !== null) {
      inserted = await insert(client, values.slug as string)
      if (inserted.length === 0) throw invalid("slug", "has already been taken")
    } else {
      const base = slugify(values.name as string)
      const like = base.replace(/[\\%_]/g, "\\$&") + "-%"
      const taken = new Set((await run(client, "slugs", SLUGS_SQL, [key.tenantId, base, like])).map((r) => r.slug as string))
      for (let n = 1;; n++) {
        const slug = n === 1 ? base : `${base}-${n}`
        if (taken.has(slug)) continue
        inserted = await insert(client, slug)
        if (inserted.length > 0) break
        taken.add(slug)
      }
    }
    const created = toMember(inserted[0])
    await outbox(client, key.tenantId, "member.created", created)
    return created
  })
}

const createInvoice = async (key: Key, body: Body) => {
  const memberId = integerOf(body.member_id ?? null, "member_id", 1, MAX_CENTS)
  const given = body.lines
  if (!Array.isArray(given) || given.length < 1 || given.length > 500) throw invalid("lines", "must be an array of 1 to 500 lines")
  const lines = given.map((line: unknown, i) => {
    if (typeof line !== "object" || line === null || Array.isArray(line)) throw invalid(`lines.${i}`, "must be an object")
    const l = line as Body
    const description = textOf(l, "description", 255, true)
    const cents = dollarsOf(l.unit, `lines.${i}.unit`, 0)
    return { description, cents, quantity: (l.quantity ?? null) === null ? 1 : integerOf(l.quantity, `lines.${i}.quantity`, 1, MAX_CENTS) }
  })
  const memo = textOf(body, "memo", 2000)
  const subtotal = lines.reduce((sum, l) => sum + BigInt(l.cents) * BigInt(l.quantity), 0n)
  if (subtotal > BigInt(MAX_CENTS)) throw invalid("lines", "must not total more than 90071992547409.91")
  if ((await run(pool, "member-find", MEMBER_FIND_SQL, [key.tenantId, memberId])).length === 0) throw invalid("member_id", "is invalid")
  const tenant = await tenantRow(pool, key.tenantId)
  const total = Number(subtotal)
  return transaction(async (client) => {
    const invoice = toInvoice((await run(client, "invoice-insert", INVOICE_INSERT_SQL, [
      key.tenantId, memberId, null, "draft", tenant.currency, total, total, 0, total, null, null, null, memo, randomBytes(24).toString("base64url")
    ]))[0])
    const values = lines.flatMap((l, position) => [key.tenantId, invoice.id, position, l.description, l.cents, l.quantity])
    await run(client, `lines-${lines.length}`, insertInto("invoice_lines", LINE_COLUMNS, lines.length), values)
    await outbox(client, key.tenantId, "invoice.created", invoice)
    return invoice
  })
}

const lockInvoice = async (client: pg.PoolClient, tenantId: number, id: number) =>
  found((await run(client, "invoice-lock", INVOICE_LOCK_SQL, [tenantId, id]))[0])
const issueInvoice = (key: Key, id: number) =>
  transaction(async (client) => {
    const current = await lockInvoice(client, key.tenantId, id)
    if (current.status !== "draft") throw fail(422, `Only a draft invoice can be issued; this invoice is ${current.status}.`)
    const tenant = await tenantRow(client, key.tenantId)
    const n = Number((await run(client, "next-number", NEXT_NUMBER_SQL, [key.tenantId]))[0].last_number)
    const now = new Date()
    const due = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + tenant.net_terms)).toISOString().slice(0, 10)
    const settled = current.balance_cents === 0
    const number = `${tenant.invoice_prefix}${String(n).padStart(6, "0")}`
    const invoice = toInvoice((await run(client, "invoice-issue", ISSUE_SQL, [number, settled ? "paid" : "open", now.toISOString(), due, key.tenantId, id]))[0])
    for (const type of ["invoice.updated", "invoice.issued", ...(settled ? ["invoice.paid"] : [])]) await outbox(client, key.tenantId, type, invoice)
    return invoice
  })

const PAYMENT_METHODS = ["card", "check", "cash", "ach", "comp", "refund", "other"] as const
const recordPayment = async (key: Key, id: number, body: Body) => {
  const [method, amount] = [oneOf(body, "method", PAYMENT_METHODS), dollarsOf(body.amount, "amount", 1)]
  const [receivedOn, reference, notes] = [dateOf(body, "received_on"), textOf(body, "reference", 255), textOf(body, "notes", 2000)]
  return transaction(async (client) => {
    const invoice = await lockInvoice(client, key.tenantId, id)
    if (method === "refund") throw fail(422, "A refund cannot be recorded as a payment.")
    if (invoice.status !== "open") throw fail(422, `This invoice is ${invoice.status}; only an open invoice can take a payment.`)
    if (amount > invoice.balance_cents) throw fail(422, "The payment is more than the invoice's outstanding balance.")
    const payment = toPayment((await run(client, "payment-insert", PAYMENT_INSERT_SQL, [key.tenantId, invoice.member_id, method, null, amount, receivedOn, reference, notes, id]))[0])
    const balance = invoice.balance_cents - amount
    const paid = invoice.amount_paid_cents + amount
    const updated = toInvoice((await (balance === 0
      ? run(client, "invoice-pay-in-full", PAY_IN_FULL_SQL, [paid, balance, "paid", key.tenantId, id])
      : run(client, "invoice-pay", PAY_SQL, [paid, balance, key.tenantId, id])))[0])
    await outbox(client, key.tenantId, "payment.created", payment)
    await outbox(client, key.tenantId, "invoice.updated", updated)
    if (balance === 0) await outbox(client, key.tenantId, "invoice.paid", updated)
    return payment
  })
}

// Routing: method, path, scope, status, handler (`id` from the path: one that is no positive
// integer names no row, id 0: 404, like a missing one).

type Handler = (key: Key, id: number, req: IncomingMessage, search: string) => unknown
const ROUTES: ReadonlyArray<readonly [string, RegExp, string | undefined, number, Handler]> = [
  ["GET", /^\/api\/v1\/members\/?$/, "members:read", 200, (key, _, __, search) => membersPage(key, search)],
  ["GET", /^\/api\/v1\/me$/, undefined, 200, ({ chamber, name, prefix, scopes }) =>
    ({ chamber, key: { name, prefix, scopes, can_write: scopes.some((s) => s.endsWith(":write")) }, label: `${chamber.name} (${name})` })],
  ["GET", /^\/api\/v1\/members\/(?!search$)([^/]+)$/, "members:read", 200, (key, id) => member(key, id)],
  ["POST", /^\/api\/v1\/members$/, "members:write", 201, async (key, _, req) => ({ data: await createMember(key, await readBody(req)) })],
  ["POST", /^\/api\/v1\/invoices$/, "invoices:write", 201, async (key, _, req) => ({ data: await createInvoice(key, await readBody(req)) })],
  ["POST", /^\/api\/v1\/invoices\/([^/]+)\/issue$/, "invoices:write", 200, async (key, id) => ({ data: await issueInvoice(key, id) })],
  ["POST", /^\/api\/v1\/invoices\/([^/]+)\/payments$/, "payments:write", 201, async (key, id, req) => ({ data: await recordPayment(key, id, await readBody(req)) })]
]
const ROW_ID = /^[1-9][0-9]{0,15}$/
const NOT_CANONICAL = /[^A-Za-z0-9/._~-]/
const WELL_FORMED_ID = /^[A-Za-z0-9._:-]{1,128}$/
const send = (res: ServerResponse, status: number, body: unknown) => {
  const text = JSON.stringify(body)
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
  res.end(text)
}

const authorizationHeaders = (req: IncomingMessage) => req.rawHeaders.filter((h, i) => i % 2 === 0 && h.toLowerCase() === "authorization").length
const server = createServer(async (req, res) => {
  const incoming = req.headers["x-request-id"]
  res.setHeader("x-request-id", typeof incoming === "string" && WELL_FORMED_ID.test(incoming) ? incoming : randomUUID())
  try {
    const [path = "/", search = ""] = (req.url ?? "/").split("?")
    let match: RegExpExecArray | null = null
    const route = NOT_CANONICAL.test(path) ? undefined : ROUTES.find(([method, pattern]) => method === req.method && (match = pattern.exec(path)) !== null)
    if (route === undefined) return send(res, 404, { message: "Not found." })
    if (Number(req.headers["content-length"] ?? 0) > MAX_BODY) return send(res, 413, { message: "The request body is larger than 1 MiB." })
    const key = authorizationHeaders(req) > 1 ? undefined : await authenticate(req)
    if (key === undefined) return send(res, 401, { message: "Unauthenticated." })
    const [, , scope, status, handle] = route
    if (scope !== undefined && !key.scopes.includes(scope)) return send(res, 403, { message: "This action is unauthorized." })
    const id = (match as RegExpExecArray | null)?.[1]
    return send(res, status, await handle(key, id !== undefined && ROW_ID.test(id) ? Number(id) : 0, req, search))
  } catch (error) {
    if (error instanceof HttpError) return send(res, error.status, { message: error.message })
    console.error(error)
    if (!res.headersSent) send(res, 500, { message: "Server error." })
  }
})

server.listen(0, "127.0.0.1", () => console.log(`${LISTENING} ${(server.address() as { port: number }).port}`))

for (const signal of ["SIGTERM", "SIGINT"]) {
  process.on(signal, () => void (server.close(() => pool.end().finally(() => process.exit(0))), server.closeAllConnections()))
}
