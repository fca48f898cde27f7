/**
 * Request ids and the access log (docs/api.md "Request ids and logs"): every response carries
 * `X-Request-Id` (a well-formed incoming one is kept, otherwise a new one), every log line of a
 * request is annotated with it, and each request ends with one line: method, path (the values
 * of secret-looking query parameters, and anything shaped like a key or a webhook secret
 * wherever it is, replaced), status, duration, request id and key prefix. The key itself is
 * never logged, even sent where it does not belong.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as LogLevel from "effect/LogLevel"
import * as References from "effect/References"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { randomUUID } from "node:crypto"
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
const SECRET = /key|token|secret|password|passwd|auth|signature|session/i
/**
 * An API key (`cck_` and 40 base62 characters) or a webhook secret (`whsec_` and base64), each
 * character as sent or percent-encoded: redacted wherever it appears, as a client may put it
 * anywhere (`?bearer=`, `?name=`, a path segment).
 */
const SECRET_VALUE = /cck_(?:[A-Za-z0-9]|%[0-9A-Fa-f]{2}){40}|whsec_(?:[A-Za-z0-9+/=]|%[0-9A-Fa-f]{2})+/g
const mayHoldSecret = (text: string) => text.includes("cck_") || text.includes("whsec_")
const withoutSecrets = (text: string) => mayHoldSecret(text) ? text.replace(SECRET_VALUE, "[redacted]") : text

/** The request's path and query, with the values of secret-looking parameters and anything shaped like a secret replaced. */
export const loggedPath = (url: string): string => {
  const at = url.indexOf("?")
  if (at === -1) return withoutSecrets(url)
  const query = url.slice(at + 1).split("&").map((pair) => {
    const eq = pair.indexOf("=")
    const name = eq === -1 ? pair : pair.slice(0, eq)
    let decoded = name
    try {
      decoded = decodeURIComponent(name)
    } catch {
      // a name that is not valid percent-encoding is logged as sent
    }
    return eq !== -1 && SECRET.test(decoded) ? `${name}=[redacted]` : pair
  })
  return withoutSecrets(`${url.slice(0, at)}?${query.join("&")}`)
}

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
    const requestId = incoming !== undefined && WELL_FORMED.test(incoming) && withoutSecrets(incoming) === incoming ? incoming : randomUUID()
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
        annotations.path = loggedPath(request.url)
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
