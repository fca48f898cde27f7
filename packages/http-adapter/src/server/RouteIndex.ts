/**
 * The one index of the server's routes, derived from the contract (`HttpApi.reflect`) and the
 * paths served beside it: which route template a request path names and the methods it serves.
 * It is built with the router's own matcher (`FindMyWay`) and the router's configuration, so it
 * matches a path as the router does; it answers the 405 with `Allow` and the unknown path's 404
 * (server/JsonErrors.ts), and gives the route label of every answer (server/RequestMetrics.ts).
 */
import * as FindMyWay from "effect/http/FindMyWay"
import * as HttpApi from "effect/http-api/HttpApi"
import type * as HttpApiGroup from "effect/http-api/HttpApiGroup"

/** How the router matches paths (`Server.ts`): exactly as written, case, trailing and doubled slashes included. */
export const ROUTER_CONFIG = { caseSensitive: true, ignoreTrailingSlash: false, ignoreDuplicateSlashes: false } as const

/** The characters of a canonical path: an API path is ASCII letters, digits and `/._~-`. */
const NOT_CANONICAL = /[^A-Za-z0-9/._~-]/

/** The path of a request URL as sent, when canonical; the router would decode `%` escapes and cut a segment at `;`. */
export const canonicalPath = (url: string): string | undefined => {
  const end = url.indexOf("?")
  const path = end === -1 ? url : url.slice(0, end)
  return NOT_CANONICAL.test(path) ? undefined : path
}

/** A route template and the methods served on it; HEAD wherever GET (the router serves it with the GET route). */
export interface IndexedRoute {
  readonly template: string
  readonly methods: ReadonlySet<string>
  /** The `Allow` header of a 405 on it; undefined for a path beside the contract, whose other methods are 404s. */
  readonly allow: string | undefined
}

/**
 * The route a request URL names, or undefined for a path no route has (a path that is not canonical has none). All templates share one
 * tree, so a literal segment wins over a path id whatever the method, as in the router for one
 * method: PATCH on `/members/search` names that GET route, not `/members/:id`.
 */
export type RouteIndex = (url: string) => IndexedRoute | undefined

const hasEmpty = (params: Record<string, string | undefined>) => {
  for (const name in params) if (params[name] === "") return true
  return false
}

/** The index of `api`'s endpoints and of `others`, paths served with GET beside the contract. */
export const makeRouteIndex = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>,
  others: ReadonlyArray<string>
): RouteIndex => {
  const methods = new Map<string, Set<string>>(others.map((path) => [path, new Set(["GET"])]))
  HttpApi.reflect(api, {
    onGroup() {},
    onEndpoint({ endpoint }) {
      const served = methods.get(endpoint.path) ?? new Set<string>()
      methods.set(endpoint.path, served.add(endpoint.method))
    }
  })
  const tree = FindMyWay.make<IndexedRoute>(ROUTER_CONFIG)
  for (const [template, served] of methods) {
    if (served.has("GET")) served.add("HEAD")
    const allow = others.includes(template) ? undefined : [...served].join(", ")
    tree.on("GET", template as FindMyWay.PathInput, { template, methods: served, allow })
  }
  return (url) => {
    const path = canonicalPath(url)
    const found = path === undefined ? undefined : tree.find("GET", path)
    // An empty path id (`/members/`) names no row, so no route either.
    return found === undefined || hasEmpty(found.params) ? undefined : found.handler
  }
}
