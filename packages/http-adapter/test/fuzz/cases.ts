/**
 * Hostile and odd requests, generated from the contract with a seeded generator: for any
 * endpoint, wrong types, nulls, huge and odd numbers and strings, nested and duplicated keys,
 * `__proto__`, injection-like text, bytes that are not UTF-8, odd paths, methods and headers.
 * The same seed gives the same requests, so a failure is replayed from its seed and index.
 */
import type { Endpoint } from "../endpoints.ts"
import { rawRequest } from "../raw.ts"

/** A small seeded generator (mulberry32). */
export const prng = (seed: number) => {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (n: number) => Math.floor(next() * n)
  const pick = <A>(xs: ReadonlyArray<A>): A => xs[int(xs.length)]!
  const chance = (p: number) => next() < p
  return { next, int, pick, chance }
}
export type Rng = ReturnType<typeof prng>

const STRINGS: ReadonlyArray<string> = [
  "", " ", "a", "x".repeat(256), "x".repeat(5001), "😀".repeat(300), "\u0000", "a\u0000b", "\ud800", "\udfff", "\u202e",
  "null", "undefined", "NaN", "-1", "0", "1e3", "1.5", "true", "[]", "{}", "__proto__", "constructor",
  "' OR 1=1 --", "\"; DROP TABLE members; --", "${7*7}", "{{7*7}}", "<script>alert(1)</script>", "../../etc/passwd",
  "%00", "%FF", "\\", "\r\n", "é", "Ω≈ç√", "ｆｕｌｌｗｉｄｔｈ", "a@b", "a@b.co", "2024-02-30", "2024-02-29", "9999-12-31",
  "http://x", "ACTIVE", "active", "-name", "name", "created_at"
]

const NUMBERS: ReadonlyArray<number> = [
  0, -0, -1, 1, 1.5, -1.5, 2147483647, 2147483648, 9007199254740991, 9007199254740993, 1e21, 1e308, -1e308, 5e-324, 1000000, 1000001
]

/** A JSON value of any type, sometimes big or deep. */
const anyValue = (rng: Rng, depth = 0): unknown => {
  switch (rng.int(depth > 2 ? 5 : 8)) {
    case 0:
      return null
    case 1:
      return rng.pick(STRINGS)
    case 2:
      return rng.pick(NUMBERS)
    case 3:
      return rng.chance(0.5)
    case 4:
      return rng.pick(STRINGS).repeat(1 + rng.int(3))
    case 5:
      return Array.from({ length: rng.pick([0, 1, 2, 51, 60]) }, () => (rng.chance(0.7) ? "Retail" : anyValue(rng, depth + 1)))
    case 6:
      return { [rng.pick(STRINGS)]: anyValue(rng, depth + 1), __proto__: { polluted: true } }
    default:
      return [anyValue(rng, depth + 1)]
  }
}

/** JSON text for `value` with the odd things a serializer never writes. */
const oddJson = (rng: Rng, value: Record<string, unknown>): string | Buffer => {
  const text = JSON.stringify(value)
  switch (rng.int(12)) {
    case 0:
      return text.replace(/^\{/, `{"${Object.keys(value)[0] ?? "name"}":"dup",`) // a key twice
    case 1:
      return text.replace(/^\{/, `{"__proto__":{"admin":true},"constructor":{"prototype":{"x":1}},`)
    case 2:
      return text.slice(0, rng.int(text.length)) // truncated
    case 3:
      return Buffer.concat([Buffer.from(text.slice(0, -1)), Buffer.from([0x2c, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d])]) // not UTF-8
    case 4:
      return "\ufeff" + text // a byte-order mark
    case 5:
      return "[".repeat(5000) + "]".repeat(5000) // deep
    case 6:
      return text.replace(/:(\d+)/, ":1e999") // a number JSON cannot hold
    case 7:
      return text.replace(/^\{/, `{"name":"\\ud800","city":"\\u0000",`) // a lone surrogate and NUL as escapes
    case 8:
      return rng.pick(["null", "[]", "42", "\"text\"", "true", "", " ", "{", "}"])
    default:
      return text
  }
}

/** An example body with one to three fields changed, some removed, unknown ones added. */
const mutatedBody = (rng: Rng, example: unknown): Record<string, unknown> => {
  const body: Record<string, unknown> = { ...(example as Record<string, unknown>) }
  const keys = Object.keys(body)
  for (let i = 0, n = 1 + rng.int(3); i < n; i++) {
    const key = keys.length > 0 && rng.chance(0.8) ? rng.pick(keys) : rng.pick(["id", "tenant_id", "created_at", "custom_fields", "foo", "__proto__"])
    if (rng.chance(0.15)) delete body[key]
    else body[key] = anyValue(rng)
  }
  return body
}

const ODD_IDS: ReadonlyArray<string> = [
  "0", "-1", "abc", "1e3", "1.5", "%31", "1;x=1", "99999999999999999999", "9007199254740993", "1%00", "%2e%2e", "..", "SEARCH", "search", " 1", "+1", "01"
]

/** The path of `endpoint` with its ids, sometimes made odd. */
const oddPath = (rng: Rng, endpoint: Endpoint, ids: Readonly<Record<string, number>>): string | Buffer => {
  const path = endpoint.path.replace(/:([A-Za-z_]+)/g, (_, id: string) => (rng.chance(0.3) ? rng.pick(ODD_IDS) : String(ids[id] ?? 1)))
  switch (rng.int(10)) {
    case 0:
      return path.toUpperCase()
    case 1:
      return path.replace("/api/v1/", "/api/v1//")
    case 2:
      return path + "/"
    case 3:
      return path.replace(/\/(\w)/, (_, c: string) => `/%${c.charCodeAt(0).toString(16)}`)
    case 4:
      return Buffer.concat([Buffer.from(path), Buffer.from([0xff, 0x00])])
    case 5:
      return path + "/" + "a".repeat(rng.pick([10, 5000, 100_000]))
    default:
      return path
  }
}

const QUERY_NAMES: ReadonlyArray<string> = ["page", "sort", "status", "email", "name", "per_page", "__proto__", "page[]"]

/** Every byte percent-encoded (a lone surrogate as U+FFFD's bytes: encodeURIComponent would throw). */
const percentEncoded = (value: string) => [...Buffer.from(value, "utf8")].map((b) => `%${b.toString(16).padStart(2, "0")}`).join("")

const oddQuery = (rng: Rng): string => {
  const parts: Array<string> = []
  for (let i = 0, n = rng.int(4); i < n; i++) {
    const value = rng.chance(0.5) ? String(rng.pick(NUMBERS)) : rng.pick(STRINGS)
    parts.push(`${rng.pick(QUERY_NAMES)}=${rng.chance(0.2) ? value : percentEncoded(value)}`)
  }
  return parts.length === 0 ? "" : `?${parts.join("&")}`
}

export interface FuzzTarget {
  /** A key with every scope, of a chamber that has a row for every path id. */
  readonly key: string
  readonly ids: Readonly<Record<string, number>>
  readonly endpoints: ReadonlyArray<Endpoint>
}

/** One generated request: what it is (for a report) and its bytes. */
export const generate = (rng: Rng, target: FuzzTarget): { readonly label: string; readonly bytes: Buffer } => {
  const endpoint = rng.pick(target.endpoints)
  const method = rng.chance(0.9) ? endpoint.method : rng.pick(["GET", "POST", "PATCH", "PUT", "DELETE", "FOO", "get", "PROPFIND", "OPTIONS"])
  const path = oddPath(rng, endpoint, target.ids)
  const fullPath = typeof path === "string" ? path + oddQuery(rng) : path
  const headers: Array<readonly [string, string]> = []
  switch (rng.int(14)) {
    case 0:
      break // no key
    case 1:
      headers.push(["Authorization", `Bearer ${target.key}`], ["Authorization", "Bearer cck_nope"])
      break
    case 2:
      headers.push(["Authorization", rng.pick(["Basic abc", "Bearer", "Bearer  " + target.key, target.key, `bearer ${target.key}`])])
      break
    case 3:
      headers.push(["Authorization", `Bearer ${target.key}`], ["X-Big", "x".repeat(20_000)])
      break
    case 4:
      headers.push(["Authorization", `Bearer ${target.key}`], ["Expect", rng.pick(["bogus", "100-continue"])])
      break
    default:
      headers.push(["Authorization", `Bearer ${target.key}`])
  }
  let body: string | Buffer | undefined
  if (endpoint.body !== undefined || rng.chance(0.1)) {
    body = oddJson(rng, mutatedBody(rng, endpoint.body ?? {}))
    const contentType = rng.chance(0.85)
      ? "application/json"
      : rng.pick(["text/plain", "application/json; charset=latin1", "application/x-www-form-urlencoded", "", "application/json;;", "*/*"])
    if (contentType !== "") headers.push(["Content-Type", contentType])
    if (rng.chance(0.05)) {
      headers.push(["Transfer-Encoding", "chunked"], ["Content-Length", "5"]) // both: a smuggling attempt
    } else if (rng.chance(0.05)) {
      headers.push(["Transfer-Encoding", "chunked"])
      body = rng.chance(0.5) ? `${Buffer.byteLength(body).toString(16)}\r\n${String(body)}\r\n0\r\n\r\n` : `zz\r\n${String(body)}\r\n0\r\n\r\n`
    }
  }
  const bytes = rawRequest({ method, path: fullPath, headers, ...(body === undefined ? {} : { body }) })
  return { label: `${method} ${String(fullPath).slice(0, 100)} [${headers.map(([k]) => k).join(",")}] ${String(body ?? "").slice(0, 80)}`, bytes }
}
