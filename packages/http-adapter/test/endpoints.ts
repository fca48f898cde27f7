/**
 * Every endpoint of the contract as the cross-cutting suites see it: method, path, access, the
 * names of its path ids, whether it is a list that takes `page`, and the example body of its
 * payload schema.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as SchemaAST from "effect/SchemaAST"
import type * as HttpClient from "effect/http/HttpClient"
import * as HttpApi from "effect/http-api/HttpApi"
import { type Access, Api, RequiredAccess } from "../src/index.ts"
import { call } from "./fixture.ts"

export type Method = "GET" | "POST" | "PATCH" | "PUT" | "DELETE"

export interface Endpoint {
  readonly label: string
  readonly method: Method
  readonly path: string
  readonly access: Access
  /** The names of its path ids (`member` for `/members/:member`). */
  readonly ids: ReadonlyArray<string>
  /** Whether it takes `page` (a list). */
  readonly paged: boolean
  /** The example body of its payload schema; undefined when it takes no body. */
  readonly body: unknown
}

export const endpoints: Array<Endpoint> = []
HttpApi.reflect(Api, {
  onGroup() {},
  onEndpoint({ endpoint }) {
    const schemas = [...endpoint.payload.values()].flatMap((p) => p.schemas)
    const access = Context.getOrUndefined(endpoint.annotations, RequiredAccess)
    if (access === undefined) throw new Error(`${endpoint.method} ${endpoint.path} states no access`)
    const examples = schemas[0] === undefined ? undefined : SchemaAST.resolve(schemas[0].ast)?.examples as ReadonlyArray<unknown> | undefined
    endpoints.push({
      label: `${endpoint.method} ${endpoint.path}`,
      method: endpoint.method as Method,
      path: endpoint.path,
      access,
      ids: [...endpoint.path.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1]!),
      paged: endpoint.query !== undefined && SchemaAST.isObjects(endpoint.query.ast) && endpoint.query.ast.propertySignatures.some((p) => p.name === "page"),
      body: schemas.length === 0 ? undefined : examples?.[0] ?? {}
    })
  }
})


/** The id of a row a create answered: `{data: {id}}` for a resource, `{id}` for a flat webhook subscription. */
export const createdId = (body: { readonly data?: { readonly id: number }; readonly id?: number }): number => (body.data?.id ?? body.id)!

/** The endpoint that creates the rows a path id names: POST on the collection before `/:id`. */
export const creatorOf = (endpoint: Endpoint, id: string) => {
  const collection = endpoint.path.slice(0, endpoint.path.indexOf(`/:${id}`))
  const creator = endpoints.find((e) => e.method === "POST" && e.path === collection && e.body !== undefined)
  if (creator === undefined) throw new Error(`${endpoint.label}: no POST ${collection} in the contract makes the rows :${id} names`)
  return creator
}

let delivered = 0

/**
 * Rows no POST of their own collection makes, and how a suite makes one with `key`, given the
 * rows of the ids before it in the path: a subscription's delivery is made by an event it lists
 * (the contract's example subscription lists member.created).
 */
export const madeByEvent: Readonly<Record<string, (key: string, ids: Readonly<Record<string, number>>) => Effect.Effect<number, never, HttpClient.HttpClient>>> = {
  delivery: (key, ids) =>
    Effect.gen(function*() {
      yield* call("POST", "/api/v1/members", { key, body: { name: `Delivered ${++delivered}`, status: "active" } })
      const made = yield* call("GET", `/api/v1/hooks/${ids.hook}/deliveries`, { key })
      const id = made.body?.data?.[0]?.id
      if (typeof id !== "number") return yield* Effect.die(new Error(`no delivery of subscription ${ids.hook} was made: ${made.text}`))
      return id
    })
}

/** The collection a `<name>_id` body field points into (`member_id` -> `/api/v1/members`), when the contract has one. */
export const referenceCollection = (field: string) => {
  const match = /^([a-z_]+)_id$/.exec(field)
  return match === null ? undefined : endpoints.find((e) => e.method === "POST" && e.path === `/api/v1/${match[1]}s` && e.body !== undefined)
}

/**
 * An example body whose references are real: each `<name>_id` field gets the id of a row made
 * with `create` (a POST of that collection's own example), so the body is valid in the chamber.
 */
export const withReferences = <E, R>(
  body: unknown,
  create: (creator: Endpoint) => Effect.Effect<number, E, R>
) =>
  Effect.gen(function*() {
    const out: Record<string, unknown> = { ...(body as Record<string, unknown>) }
    for (const field of Object.keys(out)) {
      const creator = referenceCollection(field)
      if (creator !== undefined) out[field] = yield* create(creator)
    }
    return out
  })
