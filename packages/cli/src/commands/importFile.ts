/**
 * `chamber import --tenant ID FILE [--dry-run]` (docs/cli.md "Import"): the file's records
 * through the core importer, checked whole before anything is written, then written in one
 * transaction, with progress on stderr.
 */
import * as Effect from "effect/Effect"
import { describeJsonSyntax, type ImportInvalid, Importer, type ImportProgressEvent } from "@chamber/core"
import { readFile } from "node:fs/promises"
import { bold, DetailedError, dim, green } from "../Output.ts"
import { run } from "../Run.ts"
import { importProgress } from "../ImportProgress.ts"

/** A file that cannot be read or is not JSON: said plainly, before any database work. */
class ImportFileUnreadable extends Error {}

const readDocument = (file: string) =>
  Effect.tryPromise({
    try: async () => {
      const text = await readFile(file, "utf8")
      try {
        return JSON.parse(text) as unknown
      } catch {
        throw new ImportFileUnreadable(`${file} is not valid JSON: ${describeJsonSyntax(text)}.`)
      }
    },
    catch: (error) => error instanceof ImportFileUnreadable ? error : new ImportFileUnreadable(`Cannot read ${file}: ${(error as Error).message}`)
  })

/** Invalid records: every problem listed for people; with --json, `{"error", "problems", …}`. */
const refused = (e: ImportInvalid) =>
  new DetailedError(e.message, e.summary, { problems: e.problems, problem_count: e.problem_count, record_count: e.record_count })

export const importFile = (file: string, opts: { readonly json?: boolean; readonly tenant: string; readonly dryRun?: boolean }) => {
  const started = Date.now()
  const shown = opts.json === true ? undefined : importProgress(process.stderr, process.stderr.isTTY === true)
  const progress = shown === undefined ? undefined : (event: ImportProgressEvent) => shown.tell(event)
  return run(
    opts,
    Effect.gen(function*() {
      const document = yield* readDocument(file)
      const importer = yield* Importer
      return yield* importer.run(opts.tenant, document, { progress, dryRun: opts.dryRun === true }).pipe(
        Effect.catchTag("ImportInvalid", (e) => Effect.fail(refused(e)))
      )
    }).pipe(Effect.ensuring(Effect.sync(() => shown?.end()))),
    {
      json: (result) => (result.dryRun ? { dry_run: true, counts: result.counts } : { ids: result.ids, counts: result.counts }),
      human: (result) => {
        const counts = Object.entries(result.counts).filter(([, n]) => n > 0).map(([c, n]) => `${n.toLocaleString("en-US")} ${c}`)
        const what = bold(counts.length === 0 ? "nothing" : counts.join(", "))
        const seconds = ((Date.now() - started) / 1000).toFixed(1)
        return result.dryRun
          ? `${green("Checked")} ${what} ${dim(`in ${seconds} s`)}: no problems found. Nothing was written (--dry-run).`
          : `${green("Imported")} ${what} ${dim(`in ${seconds} s, one transaction`)}`
      }
    }
  )
}
