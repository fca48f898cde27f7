/**
 * How `chamber serve` writes its log lines (docs/cli.md "Logs"). JSON lines have the shape of
 * Effect's structured logger (message, level, timestamp, cause, annotations, spans, fiberId); a
 * line whose values are all plain (the access log's are) is serialized directly, when it is written,
 * the rest by Effect's formatter at once, which also handles causes, objects and redaction and
 * costs the access log most of its price (bench/README.md "The access log"). The lines of one turn
 * of the event loop go out in one write, and a busy process's at most once every `WRITE_INTERVAL_MS`.
 * Every line, whatever logged it, has the secrets core's Redaction.ts names replaced (the rule of
 * the access log's path and of the spans).
 */
import * as Logger from "effect/Logger"
import * as References from "effect/References"
import { redactSecrets } from "@chamber/core"

const isPlain = (value: unknown) =>
  value === null || typeof value === "string" || typeof value === "boolean" || (typeof value === "number" && Number.isFinite(value))

/** The single message of a log call, when it has one. */
const single = (message: unknown): unknown => (Array.isArray(message) ? (message.length === 1 ? message[0] : undefined) : message)

/**
 * A JSON line whose values are all plain, as its parts at the log call; its text is made when the
 * writer writes it, with the other lines of its batch, in one run of the same code. Its
 * annotations are a copy taken at the call: the request log adds the access line's fields to the
 * object its request's earlier lines carried (http-adapter server/RequestLog.ts).
 */
class PlainJsonLine implements LaterLine {
  readonly message: string | number | boolean | null
  readonly level: string
  readonly time: number
  readonly annotations: Readonly<Record<string, unknown>>
  readonly spans: string
  readonly fiberId: number
  constructor(
    message: string | number | boolean | null,
    level: string,
    time: number,
    annotations: Readonly<Record<string, unknown>>,
    spans: string,
    fiberId: number
  ) {
    this.message = message
    this.level = level
    this.time = time
    this.annotations = annotations
    this.spans = spans
    this.fiberId = fiberId
  }

  text(): string {
    return redactSecrets(`{"message":${JSON.stringify(this.message)},"level":"${this.level}","timestamp":"${new Date(this.time).toISOString()}",` +
      `"annotations":${JSON.stringify(this.annotations)},"spans":${this.spans},"fiberId":"#${this.fiberId}"}`)
  }
}

/** A log call's line as its parts when all its values are plain (the access log's always are); undefined otherwise. */
const plainJsonLine = (options: Logger.Options<unknown>): PlainJsonLine | undefined => {
  const { cause, date, fiber, logLevel } = options
  const message = single(options.message)
  if (cause.reasons.length > 0 || !isPlain(message)) return undefined
  const annotations = fiber.getRef(References.CurrentLogAnnotations)
  for (const key in annotations) {
    if (!isPlain(annotations[key]) || key === "__proto__") return undefined
  }
  const now = date.getTime()
  let spans = "{}"
  const open = fiber.getRef(References.CurrentLogSpans)
  if (open.length > 0) {
    const ages: Record<string, number> = {}
    for (const [label, started] of open) ages[label] = now - started
    spans = JSON.stringify(ages)
  }
  return new PlainJsonLine(message as PlainJsonLine["message"], logLevel.toUpperCase(), now, { ...annotations }, spans, fiber.id)
}

/** One JSON line, equal to what `Logger.formatJson` writes for the same call, secrets redacted. */
export const formatJsonLine = Logger.make<unknown, string>((options) => plainJsonLine(options)?.text() ?? redactSecrets(Logger.formatJson.log(options)))

/** A JSON line for the writer: a plain one as its parts, any other as its text, made now. */
const jsonLine = (options: Logger.Options<unknown>): string | LaterLine => plainJsonLine(options) ?? redactSecrets(Logger.formatJson.log(options))

/**
 * At most one write every this many milliseconds: a quiet process's lines go out on the next turn
 * of the event loop, a busy one's are gathered for up to this long.
 */
export const WRITE_INTERVAL_MS = 10

/** A line whose text is made when it is written. */
export interface LaterLine {
  readonly text: () => string
}

/** Lines in order, those of one turn of the event loop written together. */
export interface LineWriter {
  readonly line: (text: string | LaterLine) => void
}

/** Writes through `write`; whatever is pending when the process exits is written then. */
export const lineWriter = (write: (chunk: string) => void): LineWriter => {
  let pending: Array<string | LaterLine> = []
  let scheduled = false
  let lastWrite = -Infinity
  const flush = () => {
    scheduled = false
    if (pending.length === 0) return
    const lines = pending
    pending = []
    let chunk = ""
    for (const line of lines) chunk += (typeof line === "string" ? line : line.text()) + "\n"
    lastWrite = performance.now()
    write(chunk)
  }
  process.once("exit", flush)
  return {
    line: (text) => {
      pending.push(text)
      if (scheduled) return
      scheduled = true
      const wait = lastWrite + WRITE_INTERVAL_MS - performance.now()
      if (wait <= 0) setImmediate(flush)
      else setTimeout(flush, wait)
    }
  }
}

let stdout: LineWriter | undefined
/** The process's standard output, shared by its log lines and what it tells the operator, so they stay in order. */
export const stdoutLines = (): LineWriter => (stdout ??= lineWriter((chunk) => void process.stdout.write(chunk)))

/** The logger of `chamber serve`: `json` or `text` (logfmt) lines, to stdout unless told otherwise. */
export const linesLogger = (format: "json" | "text", out: LineWriter = stdoutLines()) => {
  return Logger.make<unknown, void>((options) => out.line(format === "json" ? jsonLine(options) : redactSecrets(Logger.formatLogFmt.log(options))))
}
