/**
 * `chamber import --tenant ID FILE [--dry-run] [--skip-invalid [--rejected PATH]]`, or with a CSV
 * file per collection (`--members members.csv --contacts contacts.csv …`) in place of FILE
 * (docs/cli.md "Import"): the records through the core importer, checked whole before anything is
 * written, then written all or nothing (docs/cli.md "While it writes"), with progress on stderr.
 */
import * as Effect from "effect/Effect"
import {
  type Collection,
  describeJsonSyntax,
  ImportCollections,
  type ImportInvalid,
  type ImportProblem,
  Importer,
  type ImportProgressEvent,
  type ImportRejected,
  type ImportResult
} from "@chamber/core"
import { constants } from "node:fs"
import { access, readFile, writeFile } from "node:fs/promises"
import { dirname } from "node:path"
import { type CsvDocument, type CsvFile, readCsvDocument } from "../CsvDocument.ts"
import { bold, DetailedError, dim, green } from "../Output.ts"
import { run } from "../Run.ts"
import { importProgress } from "../ImportProgress.ts"

/** A file that cannot be read or is not JSON or CSV, or options that name no input: said plainly, before any import work. */
class ImportFileUnreadable extends Error {}

export type ImportOptions = { readonly json?: boolean; readonly tenant: string; readonly dryRun?: boolean; readonly skipInvalid?: boolean; readonly rejected?: string } & {
  readonly [C in Collection]?: string
}

/** What the command reads: a JSON document, or a CSV file per collection. */
type Input = { readonly kind: "json"; readonly file: string } | { readonly kind: "csv"; readonly files: ReadonlyArray<CsvFile> }

const inputOf = (file: string | undefined, opts: ImportOptions): Input => {
  const files = ImportCollections.flatMap((collection) => (opts[collection] === undefined ? [] : [{ collection, path: opts[collection]! }]))
  if (file !== undefined && files.length > 0) {
    throw new ImportFileUnreadable(`Give a JSON document or CSV files (--${files[0]!.collection} …), not both.`)
  }
  if (file !== undefined) return { kind: "json", file }
  if (files.length > 0) return { kind: "csv", files }
  throw new ImportFileUnreadable(`Give a JSON document (chamber import --tenant ID data.json) or a CSV file per collection (--members members.csv …).`)
}

const readJson = (file: string) =>
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

const readCsv = (files: ReadonlyArray<CsvFile>) =>
  Effect.tryPromise({ try: () => readCsvDocument(files), catch: (error) => new ImportFileUnreadable((error as Error).message) })

/** Where a problem of CSV input is, by file, line and column, and its message with what the cell lacks. */
const locate = (csv: CsvDocument, p: Pick<ImportProblem, "collection" | "index" | "field" | "message">) => {
  const note = csv.note(p.collection as Collection, p.index, p.field)
  return { ...csv.place(p.collection as Collection, p.index, p.field), message: note === undefined ? p.message : `${p.message.replace(/\.$/, "")}; ${note}.` }
}

/** `members.csv line 4, column status (ref "m3")`. */
const csvPlace = (p: { readonly file: string; readonly line: number; readonly column: string | null; readonly ref: string | null }) =>
  `${p.file} line ${p.line}${p.column === null ? "" : `, column ${p.column}`}${p.ref === null ? "" : ` (ref ${JSON.stringify(p.ref)})`}`

/** Invalid records: every problem listed for people; with --json, `{"error", "problems", …}`. */
const refused = (e: ImportInvalid, csv: CsvDocument | undefined) => {
  if (csv === undefined) {
    return new DetailedError(e.message, e.summary, { problems: e.problems, problem_count: e.problem_count, record_count: e.record_count })
  }
  const problems = e.problems.map((p) => ({ ...p, ...locate(csv, p) }))
  const message = [e.summary, ...problems.map((p) => `  ${csvPlace(p)}: ${p.message}`)].join("\n")
  return new DetailedError(message, e.summary, { problems, problem_count: e.problem_count, record_count: e.record_count })
}

/** The refused records as the problems file holds them: each where it is, its problems, and what it held. */
const rejectedEntries = (rejected: ReadonlyArray<ImportRejected>, csv: CsvDocument | undefined) =>
  rejected.map((r) => {
    if (csv === undefined) return { collection: r.collection, index: r.index, ref: r.ref, problems: r.problems, record: r.record }
    const { file, line } = csv.place(r.collection, r.index, null)
    const problems = r.problems.map((p) => {
      const { column, message } = locate(csv, { ...p, collection: r.collection, index: r.index })
      return { field: p.field, column, message }
    })
    return { collection: r.collection, index: r.index, ref: r.ref, file, line, problems, record: r.record }
  })

/** The problems file can be written: checked before the import, which may commit. */
const writable = (path: string) =>
  Effect.tryPromise({
    try: async () => {
      await access(dirname(path), constants.W_OK)
      await access(path, constants.W_OK).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== "ENOENT") throw error
      })
    },
    catch: (error) => new ImportFileUnreadable(`Cannot write the refused records to ${path}: ${(error as Error).message}`)
  })

const writeRejected = (path: string, result: ImportResult, csv: CsvDocument | undefined) =>
  Effect.tryPromise({
    try: () => {
      const written = total(result.counts)
      const body = { refused: result.rejected.length, [result.dryRun ? "would_write" : "written"]: written, records: rejectedEntries(result.rejected, csv) }
      return writeFile(path, JSON.stringify(body, null, 2) + "\n")
    },
    catch: (error) => new ImportFileUnreadable(`Cannot write the refused records to ${path}: ${(error as Error).message}`)
  })

/** The counts as `--json` prints them: custom field definitions (`fields`) only when some were imported. */
const countsShown = (counts: ImportResult["counts"]) => {
  if (counts.fields !== 0) return counts
  const { fields: _, ...rest } = counts
  return rest
}

const total = (counts: ImportResult["counts"]) => Object.values(counts).reduce((a: number, b: number) => a + b, 0)
const count = (n: number) => n.toLocaleString("en-US")
const records = (n: number) => `${count(n)} ${n === 1 ? "record" : "records"}`

export const importFile = (file: string | undefined, opts: ImportOptions) => {
  const started = Date.now()
  const shown = opts.json === true ? undefined : importProgress(process.stderr, process.stderr.isTTY === true)
  const progress = shown === undefined ? undefined : (event: ImportProgressEvent) => shown.tell(event)
  const skipInvalid = opts.skipInvalid === true
  let rejectedPath: string | undefined
  return run(
    opts,
    Effect.gen(function*() {
      if (opts.rejected !== undefined && !skipInvalid) return yield* Effect.fail(new ImportFileUnreadable("--rejected goes with --skip-invalid."))
      const input = yield* Effect.try({ try: () => inputOf(file, opts), catch: (error) => error as ImportFileUnreadable })
      const csv = input.kind === "csv" ? yield* readCsv(input.files) : undefined
      const document = csv === undefined ? yield* readJson((input as Extract<Input, { kind: "json" }>).file) : csv.document
      if (skipInvalid) {
        rejectedPath = opts.rejected ?? `${input.kind === "json" ? input.file : input.files[0]!.path}.rejected.json`
        yield* writable(rejectedPath)
      }
      const importer = yield* Importer
      const result = yield* importer.run(opts.tenant, document, { progress, dryRun: opts.dryRun === true, skipInvalid }).pipe(
        Effect.catchTag("ImportInvalid", (e) => Effect.fail(refused(e, csv)))
      )
      if (rejectedPath !== undefined) yield* writeRejected(rejectedPath, result, csv)
      return result
    }).pipe(Effect.ensuring(Effect.sync(() => shown?.end()))),
    {
      // What the importer wrote is discarded as it stops (docs/cli.md "While it writes").
      interrupted: "Interrupted: nothing of the file was written.",
      // One transaction rolled back, or slices under a hold that nothing shows and the hold's discard removes.
      unavailable: "Nothing of the file was imported: run the import again once it answers.",
      json: (result) => {
        const counts = countsShown(result.counts)
        const written = result.dryRun ? { dry_run: true, counts } : { ids: result.ids, counts }
        return rejectedPath === undefined ? written : { ...written, refused: result.rejected.length, rejected_file: rejectedPath }
      },
      human: (result) => {
        const counts = Object.entries(result.counts).filter(([, n]) => n > 0).map(([c, n]) => `${count(n)} ${c}`)
        const what = bold(counts.length === 0 ? "nothing" : counts.join(", "))
        const seconds = ((Date.now() - started) / 1000).toFixed(1)
        const done = result.dryRun
          ? `${green("Checked")} ${what} ${dim(`in ${seconds} s`)}: no problems found. Nothing was written (--dry-run).`
          : `${green("Imported")} ${what} ${dim(`in ${seconds} s, ${result.sliced ? "published at once" : "one transaction"}`)}`
        if (rejectedPath === undefined) return done
        const written = total(result.counts)
        const refusedCount = result.rejected.length
        if (result.dryRun) {
          return `${green("Checked")} ${what} ${dim(`in ${seconds} s`)}: ${records(written)} would be written, ${records(refusedCount)} refused` +
            ` (listed with their problems in ${rejectedPath}). Nothing was written (--dry-run).`
        }
        return refusedCount === 0
          ? `${done}\nRefused no record (${count(written)} written): ${rejectedPath} lists none.`
          : `${done}\nRefused ${records(refusedCount)} (${count(written)} written): ${rejectedPath} lists ${refusedCount === 1 ? "it" : "them"} with ${refusedCount === 1 ? "its" : "their"} problems.`
      }
    }
  )
}
