/**
 * How `chamber serve` and `chamber relay` write their log lines (docs/cli.md "Logs"): Effect's
 * own formats, `Logger.formatJson` (message, level, timestamp, cause, annotations, spans,
 * fiberId) or `Logger.formatLogFmt`, each line with the secrets core's Redaction.ts names
 * replaced (the rule of the access log's path, of the spans and of the metric labels) and made
 * inert in a terminal (docs/cli.md "Text from outside": a JSON line with DEL and C1 as `\u`
 * escapes, a logfmt line with its controls shown as pictures), written when it is made, on the same stdout as what the commands tell the operator, so they stay in order.
 */
import * as Logger from "effect/Logger"
import sonicBoom, { type SonicBoom } from "sonic-boom"
import { redactSecrets } from "@chamber/core"
import { inert, inertJson } from "./Inert.ts"

/**
 * Stdout written synchronously (sonic-boom's `sync`): a pipe whose reader lags is waited for
 * rather than queued, so every line made before the process exits is written, however it exits.
 */
let stdout: SonicBoom | undefined

/** One line to stdout, a log line's or a notice's. */
export const printLine = (text: string): void => void (stdout ??= new sonicBoom.SonicBoom({ fd: 1, sync: true })).write(text + "\n")

/** A log line in `format`, redacted: what every output of the commands' logs is made of. */
export const formatLine = (format: "json" | "text"): Logger.Logger<unknown, string> =>
  format === "json"
    ? Logger.map(Logger.formatJson, (line) => inertJson(redactSecrets(line)))
    : Logger.map(Logger.formatLogFmt, (line) => inert(redactSecrets(line)))

/** The logger of `chamber serve` and `chamber relay`: `json` or `text` (logfmt) lines, to stdout unless told otherwise. */
export const linesLogger = (format: "json" | "text", write: (line: string) => void = printLine): Logger.Logger<unknown, void> => {
  const line = formatLine(format)
  return Logger.make((options) => write(line.log(options)))
}
