/**
 * BASELINE server for the bench: plain node:http + `pg`, no framework, doing the same work as
 * ours for the two measured endpoints:
 *
 * - auth: `Authorization: Bearer cck_...`, key shape check, SHA-256 hash, the same lookup as
 *   ApiKeyRepoSql.findActiveByHash (api_keys joined with tenants), last_used_at touched at most
 *   once a minute off the request path, scope check (`members:read` for the list);
 * - GET /api/v1/members?page=N: the same single statement as MemberRepoSql.list (columns,
 *   visible custom fields subquery, `count(*) OVER ()`, default name order, 100 a page) and the
 *   same JSON envelope;
 * - GET /api/v1/me: the same connection-info JSON.
 *
 * Pool of BENCH_POOL_SIZE connections (same as ours); statements are prepared (named), as
 * @effect/sql-pg prepares them. Prints `BENCH_LISTENING <port>`.
 */
import { createHash } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import pg from "pg"
import { LISTENING, POOL_SIZE } from "./shared.ts"

const url = process.env.DATABASE_URL
if (url === undefined || url === "") throw new Error("baseline-server: DATABASE_URL is required")

const pool = new pg.Pool({ connectionString: url, max: POOL_SIZE, application_name: "chamber-bench-baseline" })

const PER_PAGE = 100
const KEY_SHAPE = /^cck_[0-9A-Za-z]{40}$/

const AUTH_SQL = `SELECT k.id, k.tenant_id, k.name, k.prefix, k.scopes, k.daily_limit,
       t.public_id AS chamber_id, t.name AS chamber_name, t.website AS chamber_website
  FROM api_keys k JOIN tenants t ON t.id = k.tenant_id
  WHERE k.key_hash = $1 AND k.revoked_at IS NULL`

const COLUMNS = `m.id, m.name, m.slug, m.status, m.industry, m.secondary_industries, m.slogan, m.about, m.website,
  m.email, m.phone, m.address_line1, m.address_line2, m.city, m.state, m.zip, m.member_since::text AS member_since,
  m.employee_count, m.directory_visible,
  to_char(m.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at,
  to_char(m.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS updated_at,
  (SELECT coalesce(jsonb_object_agg(e.key, e.value), '{}'::jsonb)
     FROM jsonb_each(m.custom_fields) e
     JOIN custom_field_definitions d
       ON d.tenant_id = m.tenant_id AND d.resource = 'member' AND d.api_visible AND d.key = e.key) AS visible_custom_fields`

const LIST_SQL = `SELECT ${COLUMNS}, count(*) OVER () AS total_count
  FROM members m WHERE m.tenant_id = $1
  ORDER BY lower(m.name) COLLATE "C" ASC, m.id ASC
  LIMIT $2 OFFSET $3`

const COUNT_SQL = `SELECT count(*) AS n FROM members m WHERE m.tenant_id = $1`

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
  const { rows } = await pool.query({ name: "auth", text: AUTH_SQL, values: [hash] })
  const r = rows[0]
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
    custom_fields: r.visible_custom_fields
  },
  created_at: r.created_at,
  updated_at: r.updated_at
})

const send = (res: ServerResponse, status: number, body: unknown) => {
  const text = JSON.stringify(body)
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
  res.end(text)
}

const members = async (key: Key, query: URLSearchParams) => {
  const page = query.has("page") ? Number(query.get("page")) : 1
  if (!Number.isInteger(page) || page < 1) return [422, { message: "The given data was invalid.", errors: { page: ["The page field must be an integer of at least 1."] } }] as const
  const { rows } = await pool.query({ name: "members", text: LIST_SQL, values: [key.tenantId, PER_PAGE, (page - 1) * PER_PAGE] })
  const total = rows.length > 0
    ? Number(rows[0].total_count)
    : Number((await pool.query({ name: "count", text: COUNT_SQL, values: [key.tenantId] })).rows[0].n)
  return [200, {
    data: rows.map(toMember),
    meta: { current_page: page, per_page: PER_PAGE, total, last_page: Math.max(1, Math.ceil(total / PER_PAGE)) }
  }] as const
}

const me = (key: Key) => ({
  chamber: key.chamber,
  key: { name: key.name, prefix: key.prefix, scopes: key.scopes, can_write: key.scopes.some((s) => s.endsWith(":write")) },
  label: `${key.chamber.name} (${key.name})`
})

const server = createServer(async (req, res) => {
  try {
    const [path = "/", search = ""] = (req.url ?? "/").split("?")
    const route = req.method === "GET" && (path === "/api/v1/members" || path === "/api/v1/members/")
      ? "members"
      : req.method === "GET" && path === "/api/v1/me" ? "me" : undefined
    if (route === undefined) return send(res, 404, { message: "Not found." })
    const key = await authenticate(req)
    if (key === undefined) return send(res, 401, { message: "Unauthenticated." })
    if (route === "me") return send(res, 200, me(key))
    if (!key.scopes.includes("members:read")) return send(res, 403, { message: "This action is unauthorized." })
    const [status, body] = await members(key, new URLSearchParams(search))
    send(res, status, body)
  } catch (error) {
    console.error(error)
    if (!res.headersSent) send(res, 500, { message: "Server Error." })
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
