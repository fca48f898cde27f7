/**
 * The documentation the server publishes (`/docs`, a few MB of HTML and script, and the OpenAPI
 * document) is the same for the life of the process: each is compressed once per encoding the
 * client accepts (br, then gzip), carries a strong ETag and the fields its route gave it (the
 * page's Content-Security-Policy), and a matching `If-None-Match` gets a 304 (docs/api.md
 * "Documentation").
 */
import * as Effect from "effect/Effect"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { createHash } from "node:crypto"
import { brotliCompressSync, constants, gzipSync } from "node:zlib"

interface Cached {
  /** The fields every answer with it carries: its route's, and those of caching. */
  readonly headers: Readonly<Record<string, string>>
  readonly contentType: string
  readonly identity: Uint8Array
  readonly encoded: Map<"br" | "gzip", Uint8Array>
}

const encode = (encoding: "br" | "gzip", bytes: Uint8Array): Uint8Array =>
  encoding === "br"
    ? brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 9 } })
    : gzipSync(bytes, { level: 9 })

/** The first encoding of ours the client takes (no q-values weighing: a q=0 refuses). */
const chosen = (accept: string | undefined): "br" | "gzip" | undefined => {
  const offered = (accept ?? "").toLowerCase().split(",").map((part) => part.trim())
  const takes = (name: string) => offered.some((o) => o.split(";")[0] === name && !/;\s*q=0(\.0*)?$/.test(o))
  return takes("br") ? "br" : takes("gzip") ? "gzip" : undefined
}

export const compressingDocs = (paths: ReadonlyArray<string>) => {
  const cache = new Map<string, Cached>()
  const cached = (path: string, response: HttpServerResponse.HttpServerResponse): Cached | undefined => {
    const known = cache.get(path)
    if (known !== undefined) return known
    if (response.status !== 200 || response.body._tag !== "Uint8Array") return undefined
    const identity = response.body.body
    const etag = `"${createHash("sha256").update(identity).digest("base64url").slice(0, 27)}"`
    const entry: Cached = {
      headers: { ...response.headers, etag, vary: "Accept-Encoding", "cache-control": "public, max-age=0, must-revalidate" },
      contentType: response.body.contentType,
      identity,
      encoded: new Map()
    }
    cache.set(path, entry)
    return entry
  }
  return <E, R>(request: HttpServerRequest.HttpServerRequest, app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) => {
    // HEAD gets GET's fields (Node sends no body).
    if (request.method !== "GET" && request.method !== "HEAD") return app
    const path = request.url.split("?")[0] ?? ""
    if (!paths.includes(path)) return app
    return Effect.map(app, (response) => {
        const entry = cached(path, response)
        if (entry === undefined) return response
        const headers = entry.headers
        if (request.headers["if-none-match"] === headers.etag) return HttpServerResponse.empty({ status: 304, headers })
        const encoding = chosen(request.headers["accept-encoding"])
        if (encoding === undefined) return HttpServerResponse.uint8Array(entry.identity, { contentType: entry.contentType, headers })
        let body = entry.encoded.get(encoding)
        if (body === undefined) entry.encoded.set(encoding, body = encode(encoding, entry.identity))
        return HttpServerResponse.uint8Array(body, { contentType: entry.contentType, headers: { ...headers, "content-encoding": encoding } })
    })
  }
}
