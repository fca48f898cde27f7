/**
 * How `chamber serve` writes its log lines (docs/cli.md "Logs"). JSON lines have the shape of
 * Effect's structured logger (message, level, timestamp, cause, annotations, spans, fiberId); a
 * line whose values are all plain (the access log's are) is serialized directly, the rest by
 * Effect's formatter, which also handles causes, objects and redaction and costs the access log
 * most of its price (bench/README.md "The access log"). The lines of one turn of the event loop
 * go out in one write, and a busy process's at most once every `WRITE_INTERVAL_MS`.
 */
import * as Logger from "effect/Logger"
import * as References from "effect/References"

const isPlain = (value: unknown) =>
  value === null || typeof value === "string" || typeof value === "boolean" || (typeof value === "number" && Number.isFinite(value))

/** The single message of a log call, when it has one. */
const single = (message: unknown): unknown => (Array.isArray(message) ? (message.length === 1 ? message[0] : undefined) : message)

/** One JSON line, equal to what `Logger.formatJson` writes for the same call. */
export const formatJsonLine = Logger.make<unknown, string>((options) => {
  const { cause, date, fiber, logLevel } = options
  const message = single(options.message)
  if (cause.reasons.length === 0 && isPlain(message)) {
    const annotations = fiber.getRef(References.CurrentLogAnnotations)
    let plain = true
    for (const key in annotations) {
      if (!isPlain(annotations[key]) || key === "__proto__") {
        plain = false
        break
      }
    }
    if (plain) {
      const now = date.getTime()
      const spans: Record<string, number> = {}
      for (const [label, started] of fiber.getRef(References.CurrentLogSpans)) spans[label] = now - started
      return JSON.stringify({ message, level: logLevel.toUpperCase(), timestamp: date.toISOString(), annotations, spans, fiberId: `#${fiber.id}` })
    }
  }
  return Logger.formatJson.log(options)
})

/**
 * At most one write every this many milliseconds: a quiet process's lines go out on the next turn
 * of the event loop, a busy one's are gathered for up to this long (bench/README.md "The access
 * log's writes").
 */
export const WRITE_INTERVAL_MS = 10

/** Lines in order, those of one turn of the event loop written together. */
export interface LineWriter {
  readonly line: (text: string) => void
}

/** Writes through `write`; whatever is pending when the process exits is written then. */
export const lineWriter = (write: (chunk: string) => void): LineWriter => {
  let pending: Array<string> = []
  let scheduled = false
  let lastWrite = -Infinity
  const flush = () => {
    scheduled = false
    if (pending.length === 0) return
    const chunk = pending.join("\n") + "\n"
    pending = []
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
  const formatter = format === "json" ? formatJsonLine : Logger.formatLogFmt
  return Logger.make<unknown, void>((options) => out.line(formatter.log(options)))
}
