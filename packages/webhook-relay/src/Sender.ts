/**
 * One delivery attempt over the wire (docs/webhooks.md "Delivery"; rulings 21 and 24).
 *
 * A POST over node:https (an http: URL is refused: destinations are https only) through a
 * keep-alive agent whose connections pass the destination guard (Destination.ts). The attempt
 * has one deadline for connect, TLS, request and response; a receiver still silent then is cut
 * off. Redirects are never followed: a 3xx is a failure, like anything but a 2xx. TLS trust is
 * Node's own (its bundled roots plus NODE_EXTRA_CA_CERTS), to which `ca` adds. `send` never
 * throws or rejects: every failure is a result with `error` set.
 *
 * `error` is what the chamber sees (stored attempts, ping answers): it never holds an address the
 * relay resolved or connected to, and a refused destination reads exactly like a name that does
 * not resolve (Destination.ts NOT_PUBLIC). `detail` keeps what it leaves out for the operator's
 * log (LOG_LEVEL=debug) and goes nowhere else.
 */
import type { ClientRequest, IncomingMessage } from "node:http"
import { Agent, request as httpsRequest, type RequestOptions } from "node:https"
import type { LookupFunction } from "node:net"
import type { Duplex } from "node:stream"
import { getCACertificates } from "node:tls"
import * as Effect from "effect/Effect"
import { checkHost, ForbiddenDestinationError, guardedLookup, NOT_PUBLIC } from "./Destination.ts"
import { parseRetryAfter } from "./Schedule.ts"

/** The most of a response body kept, as text. */
export const EXCERPT_BYTES = 1024
/** The most of a response body read so that its connection can be reused; beyond it the connection is dropped. */
const DRAIN_BYTES = 64 * 1024

/** Extra certificate authorities (PEM) to trust besides Node's own. */
export type ExtraCa = string | Buffer | ReadonlyArray<string | Buffer>

export interface SendRequest {
  /** The subscription's URL; https only. */
  readonly url: string
  /** The delivery's headers (Signature.ts `deliveryHeaders`); content-length is added. */
  readonly headers: Readonly<Record<string, string>>
  /** The raw body: exactly these bytes are sent (a string as UTF-8). */
  readonly body: string | Uint8Array
  /** The whole attempt's deadline (connect + response), CHAMBER_WEBHOOK_TIMEOUT. */
  readonly timeoutMs: number
  /** CHAMBER_WEBHOOK_ALLOW_PRIVATE: when true, loopback and private destinations are allowed. */
  readonly allowPrivate: boolean
  /** Certificate authorities to trust besides Node's own (tests trusting their own certificate). */
  readonly ca?: ExtraCa | undefined
  /** Aborting it ends the attempt at once, as a failure (e.g. on shutdown). */
  readonly signal?: AbortSignal | undefined
}

/** What went wrong, for logs and decisions; `error` says it in words. */
export type SendFailure =
  | "invalid-url" // not a URL, or not https
  | "refused-destination" // a forbidden address (Destination.ts)
  | "dns" // the name did not resolve
  | "connection" // refused, reset, closed
  | "tls" // handshake failed: untrusted or mismatched certificate, protocol error
  | "timeout" // nothing (complete) within timeoutMs
  | "redirect" // a 3xx, not followed
  | "status" // any other non-2xx
  | "aborted" // the caller's signal

export interface SendResult {
  /** True exactly when a 2xx status arrived within the deadline (its body is read until the deadline at most). */
  readonly ok: boolean
  /** The response's status, null when none arrived. */
  readonly status: number | null
  /** From the start of the attempt until the response was read or the attempt failed. */
  readonly latencyMs: number
  /** The first 1 KiB of the response body as text (UTF-8, a character cut at the end dropped); null without a response. */
  readonly responseExcerpt: string | null
  /** Why the attempt failed, in words a chamber may see (no resolved address); null when ok. */
  readonly error: string | null
  /** For the operator's log only: what `error` leaves out (the address refused, the resolver's or socket's own words); null when nothing. */
  readonly detail: string | null
  /** The failure's kind, for the operator (metrics, logs): "dns" and "refused-destination" are told apart here only. */
  readonly failure: SendFailure | null
  /** The Retry-After of a 429 or 503, in seconds (Schedule.ts `parseRetryAfter`); null otherwise or when unreadable. */
  readonly retryAfterSeconds: number | null
}

export interface SenderOptions {
  readonly allowPrivate?: boolean
  readonly ca?: ExtraCa | undefined
  /** How names are resolved (default: the system resolver); the guard applies to its answers. */
  readonly resolve?: LookupFunction
  /** Connections at once per destination (host and port); default 8. */
  readonly maxSocketsPerHost?: number
  /** Connections at once overall; default 256. */
  readonly maxSockets?: number
}

export interface Sender {
  /** One attempt with this sender's agent (its allowPrivate and ca; those of the request are ignored). Never rejects. */
  readonly send: (request: Omit<SendRequest, "allowPrivate" | "ca">) => Promise<SendResult>
  /** Closes the kept-alive connections; later sends open new ones. */
  readonly close: () => void
}

/** An https agent whose every connection passes the destination guard. */
class GuardedAgent extends Agent {
  readonly #allowPrivate: boolean
  constructor(options: ConstructorParameters<typeof Agent>[0] & { readonly allowPrivate: boolean }) {
    super(options)
    this.#allowPrivate = options.allowPrivate
  }
  override createConnection(options: RequestOptions, callback?: (err: Error | null, stream: Duplex) => void): Duplex | null | undefined {
    // Node connects to an IP-literal host without calling lookup: judge it here.
    const refused = checkHost(options.host ?? options.hostname ?? "", this.#allowPrivate)
    if (refused !== undefined) {
      if (callback === undefined) throw refused
      // The agent's callback takes (error) alone on failure; its type asks for a stream it never reads then.
      callback(refused, undefined as unknown as Duplex)
      return undefined
    }
    return super.createConnection(options, callback)
  }
}

const trustedCas = (ca: ExtraCa | undefined): Array<string | Buffer> | undefined => {
  if (ca === undefined) return undefined
  const extra = typeof ca === "string" || Buffer.isBuffer(ca) ? [ca] : [...ca]
  // Node's default store: its bundled roots plus NODE_EXTRA_CA_CERTS (and the system's with --use-system-ca).
  return [...getCACertificates("default"), ...extra]
}

export const makeSender = (options: SenderOptions = {}): Sender => {
  const allowPrivate = options.allowPrivate === true
  const ca = trustedCas(options.ca)
  const perHost = options.maxSocketsPerHost ?? 8
  const agent = new GuardedAgent({
    allowPrivate,
    keepAlive: true,
    keepAliveMsecs: 1000,
    maxSockets: perHost,
    maxTotalSockets: options.maxSockets ?? 256,
    // Every connection of a destination stays open between two batches of its deliveries:
    // closing some (and opening them again, TLS handshake included) cost more than the sends.
    maxFreeSockets: perHost,
    // An idle kept-alive connection is closed after 4 s, before the usual 5 s of servers.
    timeout: 4000,
    scheduling: "lifo",
    lookup: guardedLookup({ allowPrivate, ...(options.resolve === undefined ? {} : { resolve: options.resolve }) }),
    ...(ca === undefined ? {} : { ca })
  })
  return {
    send: (request) => attempt(agent, request),
    close: () => agent.destroy()
  }
}

const senders = new Map<string, Sender>()

const caKey = (ca: ExtraCa | undefined): string =>
  ca === undefined ? "" : (typeof ca === "string" || Buffer.isBuffer(ca) ? [ca] : ca).map((c) => c.toString()).join("\n")

/**
 * One delivery attempt: POST `body` with `headers` to `url`. Senders (keep-alive agents) are
 * shared per allowPrivate and ca. Never rejects: every failure is a result with `error` set.
 */
export const send = (request: SendRequest): Promise<SendResult> => {
  const key = `${request.allowPrivate}\n${caKey(request.ca)}`
  let sender = senders.get(key)
  if (sender === undefined) {
    sender = makeSender({ allowPrivate: request.allowPrivate, ca: request.ca })
    senders.set(key, sender)
  }
  return sender.send(request)
}

/**
 * {@link send} as an Effect that cannot fail; interrupting it aborts the attempt. A failure with
 * a `detail` is logged at debug level (the operator's view of what the chamber is not told).
 */
export const sendEffect = (request: SendRequest): Effect.Effect<SendResult> =>
  Effect.promise((signal) => {
    const outer = request.signal
    if (outer === undefined) return send({ ...request, signal })
    return send({ ...request, signal: AbortSignal.any([signal, outer]) })
  }).pipe(Effect.tap((result) =>
    result.detail === null ? Effect.void : Effect.logDebug(`webhook attempt failed (${result.failure}): ${result.detail}`)
  ))

/** Closes the kept-alive connections of the shared senders (e.g. on shutdown). */
export const closeSenders = (): void => {
  for (const sender of senders.values()) sender.close()
  senders.clear()
}

const failed = (started: number, failure: SendFailure, error: string, detail: string | null = null): SendResult => ({
  ok: false,
  status: null,
  latencyMs: Math.round(performance.now() - started),
  responseExcerpt: null,
  error,
  detail,
  failure,
  retryAfterSeconds: null
})

const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|ERR_OSSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|HOSTNAME_MISMATCH)/

/** Every code of a name that did not resolve (getaddrinfo's and c-ares'). */
const DNS_CODE = /^(ENOTFOUND|ENODATA|ESERVFAIL|EREFUSED|ENONAME|EBADNAME|EAI_)/

/** The code of a transport error; a connect that tried several addresses fails with all of them. */
const codeOf = (error: Error): string => {
  const own = (error as NodeJS.ErrnoException).code
  if (own !== undefined) return own
  const first = error instanceof AggregateError ? error.errors[0] : undefined
  return first instanceof Error ? ((first as NodeJS.ErrnoException).code ?? "") : ""
}

/**
 * A transport error as a failure kind, the chamber's words and the operator's detail. Node's
 * own messages name the address connected to ("connect ECONNREFUSED 10.1.2.3:443"), so the
 * chamber gets the error code alone.
 */
const explain = (error: Error, host: string): readonly [SendFailure, string, string] => {
  if (error instanceof ForbiddenDestinationError) return ["refused-destination", error.message, error.detail]
  const code = codeOf(error)
  if (DNS_CODE.test(code)) return ["dns", NOT_PUBLIC, `${host} did not resolve (${code})`]
  if (TLS_CODE.test(code)) return ["tls", `TLS failed with the destination: ${error.message} (${code}).`, `${host}: ${error.message}`]
  return ["connection", `The connection to the destination failed${code === "" ? "" : ` (${code})`}.`, `${host}: ${error.message}`]
}

const attempt = (agent: GuardedAgent, request: Omit<SendRequest, "allowPrivate" | "ca">): Promise<SendResult> => {
  const started = performance.now()
  let url: URL
  try {
    url = new URL(request.url)
  } catch {
    return Promise.resolve(failed(started, "invalid-url", `The destination "${request.url}" is not a URL.`))
  }
  if (url.protocol !== "https:") {
    return Promise.resolve(failed(started, "invalid-url", `Webhook destinations must be https; "${url.protocol}" URLs are not delivered to.`))
  }
  if (request.signal?.aborted === true) return Promise.resolve(failed(started, "aborted", "The attempt was aborted before it started."))
  const body = typeof request.body === "string" ? Buffer.from(request.body, "utf8") : Buffer.from(request.body)

  return new Promise<SendResult>((resolve) => {
    let settled = false
    let current: ClientRequest | undefined
    let response: IncomingMessage | undefined

    const finish = (result: SendResult) => {
      if (settled) return
      settled = true
      clearTimeout(deadline)
      request.signal?.removeEventListener("abort", onAbort)
      resolve(result)
    }
    const fail = (failure: SendFailure, error: string) => {
      finish(failed(started, failure, error))
      current?.destroy()
    }
    const deadline = setTimeout(() => {
      if (response !== undefined) return done(response, true)
      fail("timeout", `The destination did not answer within ${request.timeoutMs} ms.`)
    }, request.timeoutMs)
    const onAbort = () => {
      if (response !== undefined) return done(response, true)
      fail("aborted", "The attempt was aborted.")
    }
    request.signal?.addEventListener("abort", onAbort, { once: true })

    // The body read so far: the excerpt's bytes, and how many in all.
    const kept: Array<Buffer> = []
    let keptBytes = 0
    let readBytes = 0

    /** The response has been read (or reading stops): judge it by its status. */
    const done = (res: IncomingMessage, cut: boolean) => {
      if (settled) return
      if (cut) res.destroy()
      const status = res.statusCode ?? 0
      const excerpt = new TextDecoder("utf-8").decode(Buffer.concat(kept), { stream: true })
      const ok = status >= 200 && status < 300
      const retryAfter = status === 429 || status === 503 ? parseRetryAfter(res.headers["retry-after"]) : undefined
      const location = res.headers.location
      finish({
        ok,
        status,
        latencyMs: Math.round(performance.now() - started),
        responseExcerpt: excerpt,
        detail: null,
        error: ok
          ? null
          : status >= 300 && status < 400
          ? `The destination answered ${status}${location === undefined ? "" : ` redirecting to ${location}`}; redirects are not followed.`
          : `The destination answered ${status}.`,
        failure: ok ? null : status >= 300 && status < 400 ? "redirect" : "status",
        retryAfterSeconds: retryAfter ?? null
      })
    }

    const req = httpsRequest(url, {
      method: "POST",
      agent,
      headers: { ...request.headers, "content-length": String(body.length) }
    })
    current = req
    req.on("response", (res) => {
      response = res
      res.on("data", (chunk: Buffer) => {
        readBytes += chunk.length
        if (keptBytes < EXCERPT_BYTES) {
          const part = chunk.subarray(0, EXCERPT_BYTES - keptBytes)
          kept.push(part)
          keptBytes += part.length
        }
        if (readBytes > DRAIN_BYTES) done(res, true)
      })
      res.on("end", () => done(res, false))
      res.on("error", () => done(res, true))
      res.on("aborted", () => done(res, true))
      res.on("close", () => done(res, false))
    })
    req.on("error", (error) => {
      if (settled) return
      if (response !== undefined) return done(response, true)
      const [failure, words, detail] = explain(error, url.hostname)
      finish(failed(started, failure, words, detail))
      current?.destroy()
    })
    req.end(body)
  })
}
