/**
 * How every command answers: with `--json`, exactly one JSON document on stdout (errors: a JSON
 * `{"error": "..."}` on stderr and exit code 1); otherwise text for people. Either way text from
 * outside is inert in a terminal (Inert.ts): JSON escapes every control character, and text
 * shows each as a visible stand-in.
 */
import { inert, jsonText } from "./Inert.ts"

const color = process.stdout.isTTY === true && process.env.NO_COLOR === undefined
export const bold = (s: string) => (color ? `\x1b[1m${s}\x1b[22m` : s)
export const dim = (s: string) => (color ? `\x1b[2m${s}\x1b[22m` : s)
export const green = (s: string) => (color ? `\x1b[32m${s}\x1b[39m` : s)
export const yellow = (s: string) => (color ? `\x1b[33m${s}\x1b[39m` : s)
export const red = (s: string) => (process.stderr.isTTY === true && process.env.NO_COLOR === undefined ? `\x1b[31m${s}\x1b[39m` : s)


export const printJson = (value: unknown) => process.stdout.write(jsonText(value, 2) + "\n")

export const table = (rows: ReadonlyArray<Record<string, unknown>>, columns: ReadonlyArray<string>): string => {
  if (rows.length === 0) return dim("(none)")
  const cell = (v: unknown) => inert(v === null || v === undefined ? "-" : Array.isArray(v) ? v.join(",") : String(v))
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)))
  const line = (values: ReadonlyArray<string>) => values.map((v, i) => v.padEnd(widths[i]!)).join("  ").trimEnd()
  return [bold(line(columns)), ...rows.map((r) => line(columns.map((c) => cell(r[c]))))].join("\n")
}

/** An error that says more than a line: its lines for people; with --json, its summary as `error` beside its facts. */
export class DetailedError extends Error {
  readonly summary: string
  readonly details: Readonly<Record<string, unknown>>
  constructor(message: string, summary: string, details: Readonly<Record<string, unknown>>) {
    super(message)
    this.summary = summary
    this.details = details
  }
}

/** An error on stderr: `{"error"}` with --json, else a red line for people. */
export const printError = (json: boolean, error: unknown): void => {
  const message = errorMessage(error)
  if (json) {
    const body = error instanceof DetailedError ? { error: error.summary, ...error.details } : { error: message }
    process.stderr.write(jsonText(body) + "\n")
  } else process.stderr.write(red(`error: ${inert(message, "lines")}`) + "\n")
}

export const fail = (json: boolean, error: unknown): never => {
  printError(json, error)
  process.exit(1)
}

/** A one-line message for an operator: every error of ours carries its own. */
export const errorMessage = (error: unknown): string => (error instanceof Error ? error.message : String(error))
