/**
 * `chamber import --tenant ID FILE` (docs/cli.md "Import"): the file's records through the core
 * importer, in one transaction, with a progress bar on a terminal.
 */
import * as Effect from "effect/Effect"
import { type Collection, Importer } from "@chamber/core"
import { readFile } from "node:fs/promises"
import { bold, dim, green } from "../Output.ts"
import { run } from "../Run.ts"

/** A file that cannot be read or is not JSON: said plainly, before any database work. */
class ImportFileUnreadable extends Error {}

const readDocument = (file: string) =>
  Effect.tryPromise({
    try: async () => {
      const text = await readFile(file, "utf8")
      return JSON.parse(text) as unknown
    },
    catch: (error) =>
      new ImportFileUnreadable(
        error instanceof SyntaxError ? `${file} is not valid JSON: ${error.message}` : `Cannot read ${file}: ${(error as Error).message}`
      )
  })

/** `[#########-----------] 4,000/10,000  members` on stderr, redrawn at most every 100 ms by `clock` (ms). */
export const progressBar = (stream: NodeJS.WriteStream = process.stderr, clock: () => number = Date.now) => {
  let last = 0
  return (done: number, total: number, collection: Collection) => {
    const now = clock()
    if (done !== total && now - last < 100) return
    last = now
    const width = 30
    const filled = total === 0 ? width : Math.round((done / total) * width)
    const line = `[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${done.toLocaleString("en-US")}/${total.toLocaleString("en-US")}  ${collection}`
    stream.write(`\r${line}\x1b[K${done === total ? "\n" : ""}`)
  }
}

export const importFile = (file: string, opts: { readonly json?: boolean; readonly tenant: string }) => {
  const started = Date.now()
  const progress = process.stderr.isTTY === true && opts.json !== true ? progressBar() : undefined
  return run(
    opts,
    Effect.gen(function*() {
      const document = yield* readDocument(file)
      const importer = yield* Importer
      return yield* importer.run(opts.tenant, document, progress)
    }),
    {
      json: (result) => result,
      human: (result) => {
        const counts = Object.entries(result.counts).filter(([, n]) => n > 0).map(([c, n]) => `${n.toLocaleString("en-US")} ${c}`)
        const seconds = ((Date.now() - started) / 1000).toFixed(1)
        return `${green("Imported")} ${bold(counts.length === 0 ? "nothing" : counts.join(", "))} ${dim(`in ${seconds} s, one transaction`)}`
      }
    }
  )
}
