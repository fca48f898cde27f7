/**
 * What the served OpenAPI document states beyond each schema (docs/api.md "Documentation"),
 * applied once to the whole document (Api.ts): the fields every answer carries, and the request rules the server keeps outside the decoder that the schemas alone
 * would state too loosely.
 */
import { type EventKind, EventKinds, PaymentMethods } from "@chamber/core"

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

/** The answer to a malformed Idempotency-Key (the validation 422's shape, stated here for operations without one). */
const malformedKey: Json = {
  description: "The `Idempotency-Key` header is not 1 to 255 visible ASCII characters",
  content: {
    "application/json": {
      schema: {
        type: "object",
        required: ["message", "errors"],
        properties: {
          message: { type: "string" },
          errors: { type: "object", additionalProperties: { type: "array", items: { type: "string" } } }
        },
        additionalProperties: false
      },
      example: {
        message: "The Idempotency-Key header must be 1 to 255 visible ASCII characters.",
        errors: { idempotency_key: ["The Idempotency-Key header must be 1 to 255 visible ASCII characters."] }
      }
    }
  }
}

/** The 422 of an Idempotency-Key sent again with another request: `{message}` alone. */
const keyReused: Json = {
  description: "The `Idempotency-Key` was used with a different request (`{message}` alone)",
  schema: { type: "object", required: ["message"], properties: { message: { type: "string" } }, additionalProperties: false },
  example: { message: "This Idempotency-Key was used with a different request." }
}

/**
 * The 422 of a POST or PATCH: any of its own (a validation or business-rule 422), a malformed
 * Idempotency-Key's (with `errors`) and a reused key's (`{message}` alone).
 */
const idempotent422 = (own: Json | undefined): Json => {
  const schemaOf = (response: Json) => response.content["application/json"].schema as Json
  const shapes: Array<Json> = own === undefined ? [] : [...(schemaOf(own).anyOf ?? [schemaOf(own)])]
  if (!shapes.some((s) => s.$ref === "#/components/schemas/ValidationErrorEncoded")) shapes.push(schemaOf(malformedKey))
  shapes.push(keyReused.schema)
  const descriptions = [...(own === undefined ? [malformedKey.description] : String(own.description).split(" | ")), keyReused.description]
  return {
    ...own,
    description: descriptions.join(" | "),
    content: { "application/json": { schema: { anyOf: shapes }, example: keyReused.example } }
  }
}

/** Answers a retry can replay: the successes, the 404 and the 422s. */
const replayable = (status: string) => status.startsWith("2") || status === "404" || status === "422"

/** A POST or PATCH with its Idempotency-Key: the parameter, the 409, and the replay field on what may be replayed. */
const idempotent = (operation: Json): Json => ({
  ...operation,
  parameters: [...(operation.parameters ?? []), { $ref: "#/components/parameters/IdempotencyKey" }],
  responses: Object.fromEntries(
    [...Object.entries({ ...operation.responses as Json, "422": idempotent422(operation.responses["422"]), "409": stillRunning })]
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

/** The schema of the resource each kind of event carries in `data` (ruling 20: as GET returns it). */
const RESOURCE_OF: Record<EventKind, string> = {
  "member.created": "Member",
  "member.updated": "Member",
  "contact.created": "Contact",
  "invoice.issued": "Invoice",
  "invoice.paid": "Invoice",
  "event.registration.created": "Registration",
  "deal.approved": "Deal",
  "contact.updated": "Contact",
  "event.created": "Event",
  "event.updated": "Event",
  "invoice.created": "Invoice",
  "invoice.updated": "Invoice",
  "payment.created": "Payment",
  "deal.created": "Deal",
  "deal.updated": "Deal",
  "sponsorship.created": "Sponsorship",
  "placement.created": "Placement",
  "booking.created": "Booking"
}

const WHAT_FIRES: Record<EventKind, string> = {
  "member.created": "A member was created.",
  "member.updated": "A member was changed (only when something actually changed).",
  "contact.created": "A contact was created, by any path (the API, a new subscriber, an import).",
  "invoice.issued": "A draft invoice was issued: it has its number and due date.",
  "invoice.paid": "A payment brought an invoice's balance to 0.",
  "event.registration.created": "Someone registered for an event.",
  "deal.approved": "A Hot Deal was approved.",
  "contact.updated": "A contact was changed (only when what it shows changed), or a subscriber was subscribed again.",
  "event.created": "An event was created.",
  "event.updated": "An event was changed (only when what it shows changed): rescheduled, published, cancelled, completed.",
  "invoice.created": "A draft invoice was created.",
  "invoice.updated": "An invoice was changed: issued, paid in part or in full, voided or marked uncollectible (before invoice.issued or invoice.paid when those fire).",
  "payment.created": "A payment was recorded on an invoice (before the invoice's invoice.updated).",
  "deal.created": "A Hot Deal was created (before deal.approved when created approved).",
  "deal.updated": "A Hot Deal was changed (only when what it shows changed; before deal.approved).",
  "sponsorship.created": "A sponsorship was created (by an import or the core library).",
  "placement.created": "An advertising placement was created (by an import or the core library).",
  "booking.created": "A booking was created (by an import or the core library)."
}

/** The headers of every delivery (ruling 20; X-CC-Signature-Previous during a secret rotation's overlap, ruling 31). */
const deliveryHeaders = (kind: string): ReadonlyArray<Json> => [
  ["X-CC-Event", `The event kind: \`${kind}\`.`, true],
  ["X-CC-Delivery", "The event id, stable across retries.", true],
  ["X-CC-Signature", "Lower-case hex HMAC-SHA256 of the raw body, keyed with the secret string as returned.", true],
  ["X-CC-Signature-Previous", "The same with the previous secret, while a rotated secret's overlap lasts.", false],
  ["webhook-id", "Standard Webhooks: the event id.", true],
  ["webhook-timestamp", "Standard Webhooks: Unix seconds of this attempt.", true],
  ["webhook-signature", "Standard Webhooks: `v1,<base64 HMAC-SHA256 of \"{id}.{timestamp}.{body}\">`, two space-separated during a rotation's overlap (the new secret's first).", true]
].map(([name, description, required]) => ({ name, in: "header", required, description, schema: { type: "string" } }))

const CREATED_AT = "2026-11-24T10:40:29.000Z"
const EVENT_ID = "evt_3kT9vQ2mXw7LpR4sN8yB1cZd"

/** One `webhooks` entry: what the chamber POSTs to a subscription, and what it expects back. */
const webhook = (kind: string, summary: string, data: Json, example: unknown): Json => ({
  post: {
    summary,
    description: `${summary}\n\nSigned as every delivery is: \`X-CC-Signature\` and the Standard Webhooks headers. Answer any 2xx within the timeout ` +
      "(10 s by default); anything else, or nothing, is retried after about 1 minute, 30 minutes and 6 hours.",
    operationId: `webhook.${kind}`,
    parameters: deliveryHeaders(kind),
    requestBody: {
      required: true,
      content: {
        "application/json": {
          schema: {
            type: "object",
            properties: {
              id: { type: "string", description: "The event id (`evt_` + 24 characters), stable across retries: dedupe on it." },
              type: { type: "string", enum: [kind] },
              created_at: { type: "string", format: "date-time", description: "When the change committed." },
              data
            },
            required: ["id", "type", "created_at", "data"],
            additionalProperties: false
          },
          examples: { [kind]: { value: { id: EVENT_ID, type: kind, created_at: CREATED_AT, data: example } } }
        }
      }
    },
    responses: { "2XX": { description: "Received: the delivery succeeded." } }
  }
})

/**
 * The `webhooks` section (OpenAPI 3.1; ruling 31): one entry per event kind, `data` being its
 * resource's own schema, and `ping` (POST /api/v1/hooks/{hook}/ping), each with an example.
 */
const webhooks = (schemas: Json): Json => ({
  ...Object.fromEntries(EventKinds.map((kind) => {
    const resource = RESOURCE_OF[kind]
    const example = (at(schemas, [resource, "examples"]) as unknown as ReadonlyArray<unknown>)[0]
    return [kind, webhook(kind, WHAT_FIRES[kind], { $ref: `#/components/schemas/${resource}` }, example)]
  })),
  ping: webhook("ping", "A ping asked with POST /api/v1/hooks/{hook}/ping: not stored, never retried.", {
    type: "object",
    properties: { hook_id: { type: "integer", description: "The subscription pinged." } },
    required: ["hook_id"],
    additionalProperties: false
  }, { hook_id: 3 })
})

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
    webhooks: webhooks(generated.schemas),
    components: {
      ...generated,
      headers: components,
      parameters: { ...generated.parameters, IdempotencyKey: idempotencyKey },
      securitySchemes: lowerCaseSchemes(generated.securitySchemes)
    }
  }
}
