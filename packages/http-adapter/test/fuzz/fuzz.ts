/**
 * The fuzz run shared by the test suite (a fixed seed, a few thousand requests) and `pnpm fuzz`
 * (50,000 or more, a random seed): a chamber with a row for every path id, generated requests
 * over a real socket, and every answer checked against docs/api.md "Hostile and odd requests":
 * never a 5xx, never an empty body, every error JSON in its shape (docs/api.md "Errors").
 */
import * as Effect from "effect/Effect"
import type * as HttpClient from "effect/http/HttpClient"
import { Keys, Tenants } from "@chamber/core"
import { createdId, creatorOf, type Endpoint, endpoints, madeByEvent, withReferences } from "../endpoints.ts"
import { call } from "../fixture.ts"
import { rawExchange, type RawReply } from "../raw.ts"
import { type FuzzTarget, generate, prng } from "./cases.ts"

/** What is wrong with an answer, or undefined when it keeps every promise. */
export const problemOf = (reply: RawReply): string | undefined => {
  if (reply.status === 0) return "no HTTP answer"
  if (reply.status >= 500) return `status ${reply.status}: ${reply.body.slice(0, 200)}`
  if (reply.body === "") return `status ${reply.status} with an empty body`
  if (!(reply.headers["content-type"] ?? "").startsWith("application/json")) return `status ${reply.status} as ${reply.headers["content-type"]}`
  let body: unknown
  try {
    body = JSON.parse(reply.body)
  } catch {
    return `status ${reply.status} with a body that is not JSON: ${reply.body.slice(0, 120)}`
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) return `status ${reply.status} with ${reply.body.slice(0, 120)}`
  if (reply.status < 400) return undefined
  const { message, errors, ...rest } = body as Record<string, unknown>
  if (Object.keys(rest).length > 0) return `status ${reply.status} with extra fields ${Object.keys(rest).join(", ")}`
  if (typeof message !== "string" || message === "") return `status ${reply.status} without a message`
  if (reply.status === 401 && message !== "Unauthenticated.") return `401 with ${message}`
  if (errors === undefined) return undefined
  if (reply.status !== 422) return `status ${reply.status} with errors`
  const fields = Object.entries(errors as Record<string, unknown>)
  if (fields.length === 0) return "422 with no field in errors"
  for (const [field, list] of fields) {
    if (!Array.isArray(list) || list.length === 0 || list.some((m) => typeof m !== "string" || m === "")) return `422 with errors.${field} = ${JSON.stringify(list)}`
  }
  return undefined
}

/** A chamber with a key holding every scope and one row for each kind of path id, made through the API. */
export const fuzzTarget = Effect.gen(function*() {
  const tenants = yield* Tenants
  const keys = yield* Keys
  const tenant = yield* tenants.create({ name: "Fuzz Chamber" })
  yield* tenants.addUser(tenant.id, "fuzz@chamber.example", "chamber_admin")
  const { key } = yield* keys.mint({ tenant: tenant.id, asEmail: "fuzz@chamber.example", name: "fuzz", scopes: "all" })
  const ids: Record<string, number> = {}
  // One row of each collection: the examples' unique fields (a slug) could not make a second.
  const made = new Map<string, number>()
  const make = (creator: Endpoint): Effect.Effect<number, never, HttpClient.HttpClient> =>
    Effect.gen(function*() {
      const known = made.get(creator.path)
      if (known !== undefined) return known
      const body = yield* withReferences(creator.body, make)
      const created = yield* call(creator.method, creator.path, { key, body })
      if (created.status !== 201) return yield* Effect.die(new Error(`${creator.label}: ${JSON.stringify(created.body)}`))
      made.set(creator.path, createdId(created.body))
      return createdId(created.body)
    })
  for (const endpoint of endpoints) {
    for (const id of endpoint.ids) {
      if (ids[id] !== undefined) continue
      ids[id] = yield* (madeByEvent[id]?.(key, ids) ?? make(creatorOf(endpoint, id)))
    }
  }
  return { key, ids, endpoints } satisfies FuzzTarget
}).pipe(Effect.orDie)

export interface FuzzReport {
  readonly seed: number
  readonly sent: number
  readonly statuses: Record<number, number>
  readonly failures: ReadonlyArray<{ readonly index: number; readonly label: string; readonly problem: string }>
}

/** Request `index` of a run with `seed`: the same for the same seed, whatever the order of sending. */
export const fuzzRequest = (seed: number, index: number, target: FuzzTarget) => generate(prng((seed ^ Math.imul(index + 1, 0x9e3779b1)) >>> 0), target)

/** Sends `count` generated requests, `concurrency` at a time. */
export const fuzz = (options: {
  readonly port: number
  readonly target: FuzzTarget
  readonly seed: number
  readonly count: number
  readonly concurrency: number
  readonly onProgress?: (sent: number) => void
}) =>
  Effect.gen(function*() {
    const statuses: Record<number, number> = {}
    const failures: Array<FuzzReport["failures"][number]> = []
    let sent = 0
    yield* Effect.forEach(
      Array.from({ length: options.count }, (_, index) => index),
      (index) => {
        const request = fuzzRequest(options.seed, index, options.target)
        return rawExchange(options.port, request.bytes).pipe(
          Effect.map((reply) => {
            statuses[reply.status] = (statuses[reply.status] ?? 0) + 1
            const problem = problemOf(reply)
            if (problem !== undefined) failures.push({ index, label: request.label, problem })
            if (++sent % 5000 === 0) options.onProgress?.(sent)
          }),
          Effect.catchDefect((defect) => Effect.sync(() => failures.push({ index, label: request.label, problem: String(defect) })))
        )
      },
      { concurrency: options.concurrency, discard: true }
    )
    return { seed: options.seed, sent, statuses, failures } satisfies FuzzReport
  })
