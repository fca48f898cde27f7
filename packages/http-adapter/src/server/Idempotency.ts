/**
 * Idempotency-Key on every POST and PATCH of /api/v1 (ruling 28, docs/api.md "Retrying
 * safely"): claimed by the bearer middleware, applied by the `Idempotent` middleware inside it. The key is claimed by the statement that finds
 * the request's API key, committed at once and apart from the change, so that a request with
 * the same key on any instance sees at once that it is running (409, without waiting on the
 * first's transaction), at no extra round trip to the database; a request its rate limits or
 * its scope then refuse lets go of the claim. The handler and its answer then run in one
 * transaction, which the services' own transactions join, that also keeps the answer, so a
 * change is never committed without its kept answer, nor the reverse. A kept failure (a 404, a
 * business rule) rolls the transaction back and is kept after it, having changed nothing.
 * Answers that are not kept (a body that fails to decode, any other failure) let go of the claim.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as HttpApi from "effect/http-api/HttpApi"
import type * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import type * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import { createHash, randomUUID } from "node:crypto"
import {
  type Claim,
  IdempotencyRepo,
  type IdempotencyScope,
  JoinsCallerTransaction,
  type KeyContext,
  Keys,
  openAnswer,
  sealAnswer,
  Transactor,
  WebhookSecrets
} from "@chamber/core"
import { Idempotent } from "../shared/Access.ts"
import { ValidationError } from "../shared/HttpErrors.ts"
import { requireUtf8Body } from "./RawRequest.ts"

/** How long a kept answer is replayed, CHAMBER_IDEMPOTENCY_RETENTION (default 72 hours), in milliseconds. */
export const IdempotencyRetention = Context.Reference<number>("chamber/http/IdempotencyRetention", { defaultValue: () => 72 * 3_600_000 })

/** A claim whose request died (its process ended mid-request) frees its key after this long. */
const LEASE_MS = 60_000
/** Keys one prune statement deletes at most, so it never holds long locks. */
const PRUNE_BATCH = 1_000
const PRUNE_EVERY_MS = 10 * 60_000

const VISIBLE_ASCII = /^[\x21-\x7e]{1,255}$/

const malformed = ValidationError.of({ idempotency_key: ["The Idempotency-Key header must be 1 to 255 visible ASCII characters."] })

const json = (status: number, body: unknown, headers?: Record<string, string>) =>
  HttpServerResponse.text(JSON.stringify(body), { status, contentType: "application/json", ...(headers === undefined ? {} : { headers }) })

const running = () => json(409, { message: "A request with this Idempotency-Key is still running; try again shortly." }, { "retry-after": "1" })

const reused = () => json(422, { message: "This Idempotency-Key was used with a different request." })

const answerOf = (answer: { readonly status: number; readonly body: Uint8Array }, replayed: boolean) =>
  HttpServerResponse.uint8Array(answer.body, {
    status: answer.status,
    contentType: "application/json",
    ...(replayed ? { headers: { "idempotent-replayed": "true" } } : {})
  })

/**
 * Whose claim a key's row is: this process's random identity and a count, unique across every
 * instance without drawing randomness for each request.
 */
const ownerPrefix = `${randomUUID()}:`
let owners = 0
const nextOwner = () => ownerPrefix + (++owners)

/** The request a key was first used with: method, path (without the query) and the SHA-256 of the raw body. */
const fingerprintOf = (request: HttpServerRequest.HttpServerRequest, body: ArrayBuffer) => {
  const query = request.url.indexOf("?")
  const path = query === -1 ? request.url : request.url.slice(0, query)
  return `${request.method} ${path} ${createHash("sha256").update(new Uint8Array(body)).digest("hex")}`
}

/** The body as it came (read once and kept by the request); a failure to read it is left to the global error handling (413). */
const rawBody = (request: HttpServerRequest.HttpServerRequest) => Effect.orDie(request.arrayBuffer)

const encoder = new TextEncoder()

const unreadableAnswer = () =>
  json(503, {
    message: "The answer kept for this Idempotency-Key holds a webhook secret this server cannot decrypt (CHAMBER_SECRET_KEY, docs/webhooks.md \"Secrets\")."
  }, { "retry-after": "60" })

/** The statuses of the declared failures that are kept: a missing row (404), a business rule or the core's own 422 (a taken slug). */
const KEPT_STATUSES = [404, 422]

/** What a failure is kept as: the declared error it is, at a kept status, and its encoded body. */
type KeptFailure = (failure: unknown) => { readonly status: number; readonly body: Uint8Array } | undefined

/**
 * The failures of each endpoint of `api` that are kept: the errors it declares at a kept status
 * (`HttpApi.reflect`), each encoded as its schema encodes it. Decoding failures reach the
 * middleware as the framework's schema errors, none of them declared (they become the validation
 * 422 outside it), so that 422 is never kept.
 */
const keptFailuresOf = (api: HttpApi.HttpApi<string, HttpApiGroup.Constraint>): ReadonlyMap<string, KeptFailure> => {
  const byEndpoint = new Map<string, KeptFailure>()
  HttpApi.reflect(api, {
    onGroup() {},
    onEndpoint({ endpoint, errors }) {
      const declared = KEPT_STATUSES.flatMap((status) =>
        (errors.get(status) ?? []).map((schema) => ({ status, is: Schema.is(schema), encode: Schema.encodeUnknownSync(schema as Schema.Codec<unknown, unknown>) }))
      )
      byEndpoint.set(endpointKey(endpoint), (failure) => {
        const found = declared.find((d) => d.is(failure))
        return found === undefined ? undefined : { status: found.status, body: encoder.encode(JSON.stringify(found.encode(failure))) }
      })
    }
  })
  return byEndpoint
}

const endpointKey = (endpoint: HttpApiEndpoint.Top) => `${endpoint.method} ${endpoint.path}`

/** A successful answer's status and exact bytes, or undefined when it is not one to keep. */
const keptSuccess = (response: HttpServerResponse.HttpServerResponse) => {
  if (response.status < 200 || response.status > 299) return undefined
  const body = response.body
  if (body._tag === "Uint8Array") return { status: response.status, body: body.body }
  if (body._tag === "Empty") return { status: response.status, body: new Uint8Array(0) }
  return undefined
}

class ClaimLost {
  readonly _tag = "ClaimLost"
}

/** A request's claim of its Idempotency-Key, made with its authentication, and what it found. */
export interface Pending {
  readonly scope: IdempotencyScope
  readonly owner: string
  readonly found: Claim
}

export interface Idempotency {
  /**
   * The request's API key, found by its plaintext; a POST or PATCH with a well-formed
   * Idempotency-Key also claims it, in the same statement (one round trip to the database).
   */
  readonly authenticate: (
    request: HttpServerRequest.HttpServerRequest,
    plaintext: string
  ) => Effect.Effect<{ readonly key: KeyContext; readonly pending: Pending | undefined } | undefined>
  /** The checks made once the key is known (rate limits, scope); a request they refuse lets go of its claim. */
  readonly admit: <E, R>(pending: Pending | undefined, checks: Effect.Effect<void, E, R>) => Effect.Effect<void, E, R>
  /** Runs the request's handler under its Idempotency-Key, if it is a POST or PATCH with one; otherwise as it is. */
  readonly run: <E, R>(
    request: HttpServerRequest.HttpServerRequest,
    pending: Pending | undefined,
    handle: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>,
    keptFailure: KeptFailure
  ) => Effect.Effect<HttpServerResponse.HttpServerResponse, E | ValidationError, R>
}

const writes = (method: string) => method === "POST" || method === "PATCH"

/** The Idempotency-Key to claim: a POST's or PATCH's, when well-formed (a malformed one is a 422 once the key is admitted). */
const claimable = (request: HttpServerRequest.HttpServerRequest): string | undefined => {
  const value = request.headers["idempotency-key"]
  return value !== undefined && writes(request.method) && VISIBLE_ASCII.test(value) ? value : undefined
}

export const makeIdempotency: Effect.Effect<Idempotency, never, IdempotencyRepo | Keys | Transactor | WebhookSecrets> = Effect.gen(function*() {
  const repo = yield* IdempotencyRepo
  const keys = yield* Keys
  const transactor = yield* Transactor
  const secrets = yield* WebhookSecrets
  const retentionMs = yield* IdempotencyRetention

  /** Lets go of a claim; a release that fails (the database gone) leaves the claim to its lease. */
  const release = (pending: Pending) => Effect.catchCause(repo.release(pending.scope, pending.owner), () => Effect.void)

  /** The first request with the key: the handler, its answer kept in its transaction. */
  const first = <E, R>(
    request: HttpServerRequest.HttpServerRequest,
    pending: Pending,
    handle: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>,
    keptFailure: KeptFailure
  ) => {
    const { scope, owner } = pending
    let kept = false
    return Effect.gen(function*() {
      yield* requireUtf8Body(request)
      const fingerprint = fingerprintOf(request, yield* rawBody(request))
      // The services' transactions join this one: any failure rolls the whole request back, and a
      // kept failure (which changed nothing) is kept on its own after the rollback.
      const result = yield* transactor.withTransaction(Effect.gen(function*() {
        const response = yield* Effect.provideService(handle, JoinsCallerTransaction, true)
        const answer = keptSuccess(response)
        if (answer === undefined) return { response, kept: false }
        if (!(yield* repo.keep(scope, owner, { fingerprint, status: answer.status, body: sealAnswer(secrets, answer.body) }))) return yield* Effect.fail(new ClaimLost())
        return { response: answerOf(answer, false), kept: true }
      })).pipe(Effect.catch((error) => {
        const answer = keptFailure(error)
        if (answer === undefined) return Effect.fail(error)
        return Effect.flatMap(repo.keep(scope, owner, { fingerprint, ...answer }), (ok) =>
          ok ? Effect.succeed({ response: answerOf(answer, false), kept: true }) : Effect.fail(new ClaimLost()))
      }))
      kept = result.kept
      return result.response
    }).pipe(
      Effect.catch((error) => error instanceof ClaimLost ? Effect.succeed(running()) : Effect.fail(error as E | ValidationError)),
      // The request's own answer stands whatever the release does.
      Effect.onExit(() => kept ? Effect.void : release(pending))
    )
  }

  return {
    authenticate: (request, plaintext) => {
      const value = claimable(request)
      if (value === undefined) return Effect.map(keys.authenticate(plaintext), (key) => key === undefined ? undefined : { key, pending: undefined })
      return Effect.flatMap(Clock.currentTimeMillis, (nowMs) => {
        const owner = nextOwner()
        return Effect.map(
          keys.authenticateClaiming(plaintext, value, owner, { nowMs, leaseMs: LEASE_MS, keptAfterMs: nowMs - retentionMs }),
          (found) =>
            found === undefined ? undefined : {
              key: found.key,
              pending: { scope: { tenantId: found.key.tenantId, keyId: found.key.keyId, value }, owner, found: found.claim }
            }
        )
      })
    },
    admit: (pending, checks) => pending?.found._tag === "Claimed" ? Effect.onError(checks, () => release(pending)) : checks,
    run: (request, pending, handle, keptFailure) => {
      const value = request.headers["idempotency-key"]
      if (value === undefined || !writes(request.method)) return Effect.andThen(requireUtf8Body(request), handle)
      if (pending === undefined) {
        return VISIBLE_ASCII.test(value) ? Effect.die(new Error("Idempotency-Key: a well-formed key is claimed when the request authenticates")) : Effect.fail(malformed)
      }
      const found = pending.found
      if (found._tag === "Running") return Effect.succeed(running())
      if (found._tag === "Kept") {
        return Effect.map(rawBody(request), (raw) => {
          if (fingerprintOf(request, raw) !== found.answer.fingerprint) return reused()
          const body = openAnswer(secrets, found.answer.body)
          return body === undefined ? unreadableAnswer() : answerOf({ status: found.answer.status, body }, true)
        })
      }
      return first(request, pending, handle, keptFailure)
    }
  }
})

/** The bearer middleware's claim of the request's Idempotency-Key, for `idempotentLive` inside it. */
export const PendingClaim = Context.Reference<Pending | undefined>("chamber/http/PendingClaim", { defaultValue: () => undefined })

const keptNone: KeptFailure = () => undefined

/**
 * The `Idempotent` middleware of `api`'s endpoints: inside the bearer middleware, it runs the
 * handler under the key that middleware claimed (`PendingClaim`), keeping the failures each
 * endpoint declares at a kept status.
 */
export const idempotentLive = <Id extends string, Groups extends HttpApiGroup.Constraint>(api: HttpApi.HttpApi<Id, Groups>) =>
  Layer.effect(Idempotent, Effect.gen(function*() {
    const idempotency = yield* makeIdempotency
    const kept = keptFailuresOf(api as unknown as HttpApi.HttpApi<string, HttpApiGroup.Constraint>)
    // Called once per endpoint, when the routes are built; the effect it returns runs per request.
    return (httpEffect, { endpoint }) => {
      const keptFailure = kept.get(endpointKey(endpoint)) ?? keptNone
      return Effect.withFiber((fiber) =>
        idempotency.run(
          Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest),
          fiber.getRef(PendingClaim),
          httpEffect,
          keptFailure
        )
      )
    }
  }))

/** Prunes the keys older than the retention, at start and every 10 minutes, in batches until none are left. */
export const IdempotencyPruning = Layer.effectDiscard(Effect.gen(function*() {
  const repo = yield* IdempotencyRepo
  const retentionMs = yield* IdempotencyRetention
  const pruneAll: Effect.Effect<void> = Effect.flatMap(Clock.currentTimeMillis, (nowMs) =>
    Effect.flatMap(repo.prune(nowMs - retentionMs, nowMs, PRUNE_BATCH), (n) => (n === PRUNE_BATCH ? pruneAll : Effect.void)))
  yield* Effect.forkScoped(Effect.forever(Effect.andThen(
    pruneAll.pipe(Effect.catchDefect((defect) => Effect.logWarning("idempotency keys: pruning failed; trying again later", defect))),
    Effect.sleep(PRUNE_EVERY_MS)
  )))
}))
