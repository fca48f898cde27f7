/**
 * Request ids and the access log (docs/api.md "Request ids and logs"): every response carries
 * `X-Request-Id` (a well-formed incoming one is kept, otherwise a new one), every log line of a
 * request is annotated with it, and each request ends with one line: method, path (with what
 * core's Redaction.ts names replaced: the values of secret-looking query parameters, and
 * anything shaped like a key or a webhook secret wherever it is), status, duration, request id
 * and key prefix. The key itself is never logged, even sent where it does not belong.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as LogLevel from "effect/LogLevel"
import * as References from "effect/References"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { randomUUID } from "node:crypto"
import { redactSecrets } from "@chamber/core"
import { answerFields } from "./AnswerFields.ts"
import type { OnAnswered } from "./RequestMetrics.ts"

/**
 * What is learnt during the request: the authenticating key's display prefix for the log line,
 * and the fields its answer carries whatever it is (the key's rate limits, server/RateLimiting.ts).
 */
export class RequestFacts extends Context.Service<RequestFacts, {
  keyPrefix: string | null
  headers: Record<string, string> | undefined
}>()("chamber/http/RequestFacts") {}

const WELL_FORMED = /^[A-Za-z0-9._:-]{1,128}$/

/**
 * Runs `handle` for the request with its facts and its request id on every log line; then the
 * answer gets its fields (server/AnswerFields.ts, the key's rate limits, the request id) and the
 * access-log line is written, and `onAnswered` (the request metrics, server/RequestMetrics.ts)
 * told, from the same clock. The request adds two services to its context, nothing else: the
 * router and the endpoint add theirs after it, and each one more deepens what every lookup walks.
 */
export const withRequestLog = <E, R>(
  handle: (request: HttpServerRequest.HttpServerRequest) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>,
  onAnswered?: OnAnswered
) =>
  Effect.withFiber((fiber) => {
    const request = Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)
    const incoming = request.headers["x-request-id"]
    // An id shaped like a key is not kept: it would be logged on every line of the request.
    const requestId = incoming !== undefined && WELL_FORMED.test(incoming) && redactSecrets(incoming) === incoming ? incoming : randomUUID()
    const facts: RequestFacts["Service"] = { keyPrefix: null, headers: undefined }
    // The request's own annotations: every line of it carries its id; the access line, its last,
    // the rest, added to this object once the answer is known (work the request left running
    // that logs later carries them too).
    const annotations: Record<string, unknown> = { ...fiber.getRef(References.CurrentLogAnnotations), request_id: requestId }
    const started = performance.now()
    return handle(request).pipe(
      Effect.flatMap((response) => {
        const fields: Record<string, string> = { ...answerFields(response), ...facts.headers }
        fields["x-request-id"] = requestId
        const answered = HttpServerResponse.setHeaders(response, fields)
        const ms = performance.now() - started
        onAnswered?.(request, response.status, ms / 1000, requestId, fiber.context)
        // The line is made only when it is written: with info off (the bench, `LOG_LEVEL=warn`), a
        // request skips its annotations altogether.
        if (LogLevel.isGreaterThan(fiber.getRef(References.MinimumLogLevel), "Info")) return Effect.succeed(answered)
        annotations.method = request.method
        annotations.path = redactSecrets(request.url)
        annotations.status = response.status
        annotations.duration_ms = Math.round(ms * 10) / 10
        annotations.key_prefix = facts.keyPrefix
        return Effect.as(Effect.logInfo("request"), answered)
      }),
      Effect.updateContext((context: Context.Context<any>): Context.Context<any> =>
        Context.add(Context.add(context, References.CurrentLogAnnotations, annotations), RequestFacts, facts)
      )
    ) as Effect.Effect<HttpServerResponse.HttpServerResponse, E, Exclude<R, RequestFacts>>
  })
