/**
 * What the served OpenAPI document states beyond each schema (docs/api.md "Documentation"),
 * applied once to the whole document (Api.ts): the fields every answer carries, and the request rules the server keeps outside the decoder that the schemas alone
 * would state too loosely.
 */
import { PaymentMethods } from "@chamber/core"

// OpenAPI objects, typed as Effect's Transform annotation hands them over (plain JSON).
type Json = Record<string, any>

/**
 * The HTTP authentication schemes as OpenAPI's own examples spell them (`bearer`): the framework
 * writes `Bearer`, and the /docs viewer matches the name case-sensitively, showing a Basic
 * example for anything else (HTTP itself compares scheme names without case).
 */
const lowerCaseSchemes = (schemes: Json | undefined): Json | undefined =>
  schemes === undefined ? undefined : Object.fromEntries(
    Object.entries(schemes).map(([name, scheme]) => [name, typeof scheme.scheme === "string" ? { ...scheme, scheme: scheme.scheme.toLowerCase() } : scheme])
  )

/** The response fields, named as the server sends them (ruling 8, ruling 27, docs/api.md "Request ids and logs"). */
const headers = {
  "X-Request-Id": {
    description: "The request's id: the one sent (1 to 128 of `A-Z a-z 0-9 . _ : -`), or one the server made. Every log line of the request carries it.",
    required: true,
    schema: { type: "string", minLength: 1, maxLength: 128 },
    example: "3f1c2a9e-8d4b-4a51-9a0e-5b7c6d2e1f00"
  },
  "RateLimit-Policy": {
    description: "The key's two windows (draft-ietf-httpapi-ratelimit-headers-11): `q` requests in `w` seconds.",
    required: true,
    schema: { type: "string" },
    example: "\"minute\";q=120;w=60, \"day\";q=25000;w=86400"
  },
  RateLimit: {
    description: "What remains of each window after this request (`r`) and the seconds until more comes back (`t`).",
    required: true,
    schema: { type: "string" },
    example: "\"minute\";r=117;t=42, \"day\";r=24890;t=3600"
  },
  "Retry-After": {
    description: "Whole seconds to wait before trying again (never 0). After a 429 it is exact: a retry after it is admitted.",
    required: true,
    schema: { type: "integer", minimum: 1 },
    example: 18
  },
  "Idempotent-Replayed": {
    description: "`true` when this is the kept answer of an earlier request with the same `Idempotency-Key`, replayed byte for byte; absent otherwise.",
    required: false,
    schema: { type: "string", enum: ["true"] },
    example: "true"
  },
  "WWW-Authenticate": {
    description: "The scheme to authenticate with (RFC 6750).",
    required: true,
    schema: { type: "string", enum: ["Bearer"] },
    example: "Bearer"
  }
} satisfies Record<string, Json>

/** The rate-limit fields of an answer that may come before the key is counted (a 503). */
const optional = (name: keyof typeof headers) => ({ ...headers[name], required: false })
const components = {
  ...headers,
  "RateLimit-Policy-If-Counted": optional("RateLimit-Policy"),
  "RateLimit-If-Counted": optional("RateLimit")
}

const ref = (name: keyof typeof components) => ({ $ref: `#/components/headers/${name}` })

/**
 * The fields an answer of `status` carries: every one its request id; every answer to a valid key
 * its rate-limit fields (a 401 is no valid key; a 503 may come before the key could be read);
 * a 409, a 429 and a 503 when to come back; a 401 its scheme.
 */
const headersOf = (status: string): Json => {
  const carried: Json = { "X-Request-Id": ref("X-Request-Id") }
  if (status === "503") {
    carried["RateLimit-Policy"] = ref("RateLimit-Policy-If-Counted")
    carried.RateLimit = ref("RateLimit-If-Counted")
  } else if (status !== "401") {
    carried["RateLimit-Policy"] = ref("RateLimit-Policy")
    carried.RateLimit = ref("RateLimit")
  }
  if (status === "409" || status === "429" || status === "503") carried["Retry-After"] = ref("Retry-After")
  if (status === "401") carried["WWW-Authenticate"] = ref("WWW-Authenticate")
  return carried
}

/** The Idempotency-Key parameter of every POST and PATCH (ruling 28, docs/api.md "Retrying safely"). */
const idempotencyKey = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description: "Makes a retry safe: a later request with the same key (from the same API key) and the same method, path and body gets the " +
    "first answer again, byte for byte, with `Idempotent-Replayed: true`, and changes nothing. 1 to 255 visible ASCII characters " +
    "(a UUID, say); kept 72 hours by default. The same key with another request is a 422; while the first is still running, a 409.",
  schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x21-\\x7E]+$" },
  example: "7c9e6679-7425-40de-944b-e07fc1f90ae7"
}

/** The answer of a request sent while the first with its Idempotency-Key is still running. */
const stillRunning: Json = {
  description: "The first request with this `Idempotency-Key` is still running: try again after `Retry-After` seconds",
  content: {
    "application/json": {
      schema: { type: "object", required: ["message"], properties: { message: { type: "string" } }, additionalProperties: false },
      example: { message: "A request with this Idempotency-Key is still running; try again shortly." }
    }
  }
}

/** Answers a retry can replay: the successes, the 404 and the 422s. */
const replayable = (status: string) => status.startsWith("2") || status === "404" || status === "422"

/** A POST or PATCH with its Idempotency-Key: the parameter, the 409, and the replay field on what may be replayed. */
const idempotent = (operation: Json): Json => ({
  ...operation,
  parameters: [...(operation.parameters ?? []), { $ref: "#/components/parameters/IdempotencyKey" }],
  responses: Object.fromEntries(
    [...Object.entries({ ...operation.responses as Json, "409": stillRunning })]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([status, response]) => [
        status,
        replayable(status) ? { ...response, headers: { ...response.headers, "Idempotent-Replayed": ref("Idempotent-Replayed") } } : response
      ])
  )
})

const withHeaders = (operation: Json): Json => ({
  ...operation,
  responses: Object.fromEntries(
    Object.entries(operation.responses as Json).map(([status, response]) => [status, { ...response, headers: { ...response.headers, ...headersOf(status) } }])
  )
})

/** The schema at `path` in the components, which must be there: a rule stated of nothing is a mistake. */
const at = (schemas: Json, path: ReadonlyArray<string>): Json => {
  let node: any = schemas
  for (const step of path) {
    node = node?.[step]
    if (node === undefined) throw new Error(`The OpenAPI document has no components.schemas.${path.join(".")}`)
  }
  return node
}

/** A nullable property (`anyOf` of a schema and null) without its null. */
const notNull = (schemas: Json, schema: string, property: string, why: string) => {
  const properties = at(schemas, [schema, "properties"])
  const branches = at(properties, [property, "anyOf"]) as unknown as ReadonlyArray<Json>
  const kept = branches.filter((b) => b.type !== "null")
  if (kept.length !== 1) throw new Error(`${schema}.${property} is not one schema or null`)
  properties[property] = { ...kept[0], description: why }
}

/**
 * The request rules the server keeps outside the decoder (so that it answers them in their
 * spec's shape), stated in the schemas a client validates against:
 * - PaymentCreate.method: `refund` is decoded and then refused with the business-rule 422;
 * - EventUpdate.event_type: a null is refused (spec 4.3; `starts_at`, required on create, is
 *   never nullable), although a create takes a null event_type as chamber.
 */
const requestRules = (schemas: Json) => {
  const method = at(schemas, ["PaymentCreate", "properties", "method"])
  at(schemas, ["PaymentCreate", "properties"]).method = {
    ...method,
    enum: PaymentMethods.filter((m) => m !== "refund"),
    description: "How it was paid. `refund` is refused (422 `{message}`): a payment never pays money back."
  }
  notNull(schemas, "EventUpdate", "event_type", "chamber, member or community; any other text is chamber. Not null: omit it to keep the event's type.")
}

/**
 * A map of any JSON values (a member's `custom_fields`) is generated as a bare `{type: object}`,
 * which generated clients read as an empty object; it says so.
 */
const openMaps = (node: unknown): void => {
  if (typeof node !== "object" || node === null) return
  const o = node as Json
  if (o.type === "object" && o.properties === undefined && o.additionalProperties === undefined && o.patternProperties === undefined) {
    o.additionalProperties = {}
  }
  for (const value of Object.values(o)) openMaps(value)
}

/** The document as served: `spec` as Effect generates it, with all of the above. */
export const finishDocument = (spec: Json): Json => {
  const generated: Json = structuredClone(spec.components)
  requestRules(generated.schemas)
  openMaps(generated.schemas)
  const paths = Object.fromEntries(
    Object.entries(spec.paths as Json).map(([path, item]) => [
      path,
      Object.fromEntries(
        Object.entries(item as Json).map((
          [method, operation]
        ) => [method, withHeaders(method === "post" || method === "patch" ? idempotent(operation) : operation)])
      )
    ])
  )
  return {
    ...spec,
    paths,
    components: {
      ...generated,
      headers: components,
      parameters: { ...generated.parameters, IdempotencyKey: idempotencyKey },
      securitySchemes: lowerCaseSchemes(generated.securitySchemes)
    }
  }
}
