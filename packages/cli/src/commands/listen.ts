/**
 * `chamber listen` (docs/cli.md "Commands", docs/webhooks.md
 * "Building a receiver locally"): a chamber's change feed, from now or a cursor, POSTed event by
 * event to a URL of the admin's own, each signed as a delivery is (the relay's body and headers,
 * Signature.ts), so a receiver on a laptop (`http://localhost` included) can be built and tested
 * without a subscription. It creates no subscription and stores nothing: the secret is
 * `--secret`, or a fresh one printed at the start.
 *
 * Each event is sent once, one at a time in feed order; a receiver that fails or answers
 * anything but a 2xx is reported and the next event follows (no retries). The start line is
 * printed only once the feed position is held, so whatever is committed after it is forwarded.
 * SIGINT/SIGTERM stop it with exit code 0; a send in flight is abandoned.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { type ChangeEvent, Changes, EventKinds, Tenants, WebhookSecrets } from "@chamber/core"
import { databaseConfigFromEnv, StorageLive } from "@chamber/pg-adapter"
import { deliveryBody, deliveryHeaders, EXCERPT_BYTES, parseTimeout, standardWebhooksKey } from "@chamber/webhook-relay"
import { inert, jsonText } from "../Inert.ts"
import { dim, fail } from "../Output.ts"
import { runUntilStopped } from "../Run.ts"

export interface ListenOptions {
  readonly json?: boolean
  readonly tenant: string
  readonly forwardTo: string
  readonly events?: string
  readonly after?: string
  readonly secret?: string
}

/** How long it waits before reading the feed again when no more events wait. */
const POLL_MS = 500

/** What one send came to: the receiver's status (null when none arrived) and, on failure, why. */
interface Forwarded {
  readonly status: number | null
  readonly latencyMs: number
  /** The first 1 KiB of a non-2xx answer's body, or why no answer arrived; null on a 2xx. */
  readonly detail: string | null
}

/** Why a fetch failed, in a few words: the system's error code when there is one. */
const failureOf = (error: unknown, timeoutMs: number): string => {
  if (error instanceof DOMException && error.name === "TimeoutError") return `no answer within ${timeoutMs} ms`
  const cause = error instanceof Error ? (error.cause as { code?: unknown; message?: unknown } | undefined) : undefined
  if (typeof cause?.code === "string") return cause.code
  if (typeof cause?.message === "string") return cause.message
  return error instanceof Error ? error.message : String(error)
}

/** One POST of `body` with `headers`; redirects are not followed (a 3xx is reported as it is). Never rejects. */
const post = async (url: string, headers: Record<string, string>, body: string, timeoutMs: number, signal: AbortSignal): Promise<Forwarded> => {
  const started = performance.now()
  const elapsed = () => Math.round(performance.now() - started)
  try {
    const response = await fetch(url, {
      method: "POST",
      headers,
      body,
      redirect: "manual",
      signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)])
    })
    const text = await response.text()
    const ok = response.status >= 200 && response.status < 300
    return { status: response.status, latencyMs: elapsed(), detail: ok ? null : text.slice(0, EXCERPT_BYTES) }
  } catch (error) {
    return { status: null, latencyMs: elapsed(), detail: failureOf(error, timeoutMs) }
  }
}

/** An `--events` list naming no kind: said with the option's name and the kinds there are. */
const unknownKinds = (kinds: ReadonlyArray<string>) =>
  new Error(`--events names unknown event kinds: ${kinds.join(", ")}. Kinds: ${EventKinds.join(", ")}.`)

export const listen = (opts: ListenOptions) => {
  const json = opts.json === true
  let url: URL
  let timeoutMs: number
  try {
    url = new URL(opts.forwardTo)
    timeoutMs = parseTimeout(process.env.CHAMBER_WEBHOOK_TIMEOUT)
  } catch (error) {
    return fail(json, error instanceof TypeError ? new Error(`--forward-to must be an http or https URL, not "${opts.forwardTo}".`) : error)
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return fail(json, new Error(`--forward-to must be an http or https URL, not "${opts.forwardTo}".`))
  }
  if (opts.secret !== undefined) {
    try {
      standardWebhooksKey(opts.secret)
    } catch (error) {
      return fail(json, error)
    }
  }
  const target = url.href

  const report = (event: ChangeEvent, sent: Forwarded) => {
    if (json) {
      const line = { id: event.id, type: event.type, status: sent.status, latency_ms: sent.latencyMs, ...(sent.detail === null ? {} : { error: sent.detail }) }
      process.stdout.write(jsonText(line) + "\n")
    } else {
      const status = sent.status === null ? "failed" : String(sent.status)
      const detail = sent.detail === null ? "" : `  ${inert(sent.detail)}`
      process.stdout.write(`${event.type}  ${event.id}  ${status}  ${sent.latencyMs} ms${detail}\n`)
    }
  }

  const program = Effect.gen(function*() {
    const tenant = yield* (yield* Tenants).get(opts.tenant)
    const changes = yield* Changes
    const secret = opts.secret ?? (yield* WebhookSecrets).generate()
    const types = opts.events
    const read = (after: string) =>
      changes.read(tenant.id, { after, types }).pipe(
        Effect.catchTag("UnknownEventKind", (e) => Effect.fail(unknownKinds(e.kinds)))
      )
    // The position held: the cursor given (checked by reading after it), else the feed's head now.
    const start = opts.after === undefined || opts.after === "head" ? (yield* read("head")).meta.next_cursor : opts.after
    let page = yield* read(start)
    if (json) process.stdout.write(jsonText({ secret, after: start }) + "\n")
    else process.stderr.write(`Forwarding to ${inert(target)}, signing with ${secret}\n${dim("Ctrl-C stops.")}\n`)

    const forward = (event: ChangeEvent) =>
      Effect.gen(function*() {
        const body = deliveryBody(event)
        const headers = deliveryHeaders(event, secret, body, new Date())
        const sent = yield* Effect.promise((signal) => post(target, headers, body, timeoutMs, signal))
        report(event, sent)
      })

    for (;;) {
      for (const event of page.data) yield* forward(event)
      if (!page.meta.has_more) yield* Effect.sleep(POLL_MS)
      page = yield* read(page.meta.next_cursor)
    }
  })

  const storage = Layer.unwrap(Effect.sync(() => StorageLive(databaseConfigFromEnv())))
  return runUntilStopped(program.pipe(Effect.provide(storage)), json)
}
