/**
 * The shell examples of README.md and docs/*.md, as a reader runs them (docs-examples.test.ts).
 *
 * Rules the docs follow (docs/cli.md "Examples in these docs"):
 * - every ```sh block runs, in the order of `DOC_ORDER`, then the other docs by name, unless the
 *   line before its fence is `<!-- example: not run (why) -->`;
 * - a command is a line, with its `\` continuations; `#` lines after it that begin with a status
 *   (`# 201 {...}`) or a JSON value (`# {...}`) are the result it shows, continued by `#` lines
 *   indented further;
 * - `KEY=...` and `TENANT=...` lines stand for what `pnpm start` printed and are not run; a block's
 *   commands run in one shell, so a variable set in a block holds for the rest of it;
 * - an id is never written as a literal: it comes from an earlier answer of the same block
 *   (`HOOK=$(curl … | tee /dev/stderr | jq .id)` keeps it and shows the answer; the result shown
 *   under such a line is checked against what it showed), and a shown result writes ids as `…`.
 *   The test runs them on a database whose ids are not the demo's, so a literal id fails it.
 */
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"

/** The order a newcomer reads them in: the README's first steps, then the API, then the rest. */
export const DOC_ORDER = ["README.md", "docs/api.md", "docs/webhooks.md", "docs/cli.md", "docs/admin.md", "docs/embedding.md"]

/** The demo chamber's id as the docs write it; the test puts the one `pnpm start` printed in its place. */
export const DOC_TENANT = "chm_4fQk2ZpL9sTx7BnA"

export interface Shown {
  /** The HTTP status the doc shows, when it shows one. */
  readonly status: number | undefined
  /** The result's text after the status: JSON with `…` where the doc leaves parts out. */
  readonly text: string
}

export interface Example {
  readonly file: string
  /** 1-based line of the command's first line. */
  readonly line: number
  /** 1-based line of its block's fence: a block's commands run in one shell, in order. */
  readonly block: number
  readonly command: string
  readonly shown: Shown | undefined
}

const NOT_RUN = /^<!--\s*example: not run\b/
const PLACEHOLDER = /^(KEY|TENANT)=\S*\s*(#.*)?$/
const RESULT = /^#\s?(?:(\d{3})\b\s*)?([[{].*)?$/

/** The doc files in reading order. */
export const docFiles = (root: string): ReadonlyArray<string> => {
  const rest = readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`).sort()
  return [...DOC_ORDER, ...rest.filter((f) => !DOC_ORDER.includes(f))]
}

/** Every runnable example of one document, in order. */
export const examplesOf = (file: string, text: string): ReadonlyArray<Example> => {
  const lines = text.split("\n")
  const out: Array<Example> = []
  for (let i = 0; i < lines.length; i++) {
    if (!/^```sh\s*$/.test(lines[i]!)) continue
    const fence = i + 1
    const skipped = i > 0 && NOT_RUN.test(lines[i - 1]!.trim())
    let j = i + 1
    const body: Array<{ readonly n: number; readonly text: string }> = []
    for (; j < lines.length && !/^```\s*$/.test(lines[j]!); j++) body.push({ n: j + 1, text: lines[j]! })
    i = j
    if (skipped) continue
    for (let k = 0; k < body.length; k++) {
      const first = body[k]!
      const trimmed = first.text.trim()
      if (trimmed === "" || trimmed.startsWith("#") || PLACEHOLDER.test(trimmed)) continue
      let command = first.text
      while (command.trimEnd().endsWith("\\") && k + 1 < body.length) command = `${command.trimEnd().slice(0, -1)} ${body[++k]!.text.trim()}`
      let shown: Shown | undefined
      const result = k + 1 < body.length ? RESULT.exec(body[k + 1]!.text.trim()) : null
      if (result !== null && (result[1] !== undefined || result[2] !== undefined)) {
        k++
        let resultText = result[2] ?? ""
        // A result goes on over `#` lines indented under it.
        while (k + 1 < body.length && /^#\s{2,}\S/.test(body[k + 1]!.text.trim())) resultText += body[++k]!.text.trim().replace(/^#\s+/, "")
        shown = { status: result[1] === undefined ? undefined : Number(result[1]), text: resultText }
      }
      out.push({ file, line: first.n, block: fence, command, shown })
    }
  }
  return out
}

/** Every runnable example of README.md and docs/, in reading order. */
export const allExamples = (root: string): ReadonlyArray<Example> =>
  docFiles(root).flatMap((file) => examplesOf(file, readFileSync(join(root, file), "utf8")))

/**
 * The `"name":value` pairs a shown result states outright: strings, numbers, booleans and null,
 * leaving out what changes from run to run (times, secrets, keys) and what the doc elides.
 */
export const statedPairs = (shown: string): ReadonlyArray<string> =>
  [...shown.matchAll(/"[A-Za-z_][A-Za-z0-9_]*":(?:"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?|true|false|null)(?=[,}\]\s])/g)]
    .map((m) => m[0])
    .filter((pair) => !/…|":"\d{4}-\d\d-\d\dT|whsec_|cck_|":"chm_/.test(pair))
