/**
 * `chamber export --tenant ID [--out FILE|DIR] [--format json|csv]` (docs/cli.md "Export"): the
 * chamber's data as the import takes it, through the core exporter, written as it is read (a page
 * of records at a time) with progress on stderr. JSON goes to stdout without --out, or to FILE;
 * CSV is a file per collection in DIR, as `chamber import --members … --contacts …` reads them.
 */
import * as Effect from "effect/Effect"
import { type Collection, type ExportRecord, Exporter, exportFields, type ExportResult } from "@chamber/core"
import { stringify } from "csv-stringify/sync"
import { createWriteStream, type WriteStream } from "node:fs"
import { mkdir, rename, rm } from "node:fs/promises"
import { join } from "node:path"
import type { Writable } from "node:stream"
import { exportProgress } from "../ExportProgress.ts"
import { bold, dim, green } from "../Output.ts"
import { run } from "../Run.ts"

export interface ExportOptions {
  readonly json?: boolean
  readonly tenant: string
  readonly out?: string
  readonly format?: string
}

/** Options that do not go together, or a file that cannot be written: said plainly. */
class ExportUnwritable extends Error {}

const unwritable = (error: unknown) => new ExportUnwritable(`Cannot write the export: ${(error as Error).message}`)

/**
 * Writes `text`, settled once the stream has taken it (so a slow reader slows the export, not
 * memory). A failed write (a full disk) is answered here. A reader of stdout that goes away ends
 * the command (bin.ts).
 */
const writeTo = (stream: Writable, text: string) =>
  Effect.tryPromise({
    try: () => new Promise<void>((resolve, reject) => stream.write(text, (error) => (error ? reject(error) : resolve()))),
    catch: unwritable
  })

const closed = (stream: WriteStream) =>
  Effect.tryPromise({
    try: () => new Promise<void>((resolve, reject) => stream.end((error?: Error | null) => (error ? reject(error) : resolve()))),
    catch: unwritable
  })

const opened = (path: string) =>
  Effect.tryPromise({
    try: () =>
      new Promise<WriteStream>((resolve, reject) => {
        const stream = createWriteStream(path)
        // Once open, a failed write or end is answered by its callback (writeTo, closed); the
        // `error` event it also raises would end the process with a stack trace if nothing listened.
        stream.once("open", () => resolve(stream.on("error", () => {}))).once("error", reject)
      }),
    catch: (error) => new ExportUnwritable(`Cannot write ${path}: ${(error as Error).message}`)
  })

/**
 * The JSON document, a record a line: `{"fields": [ … ], "members": [ … ], …}`, every collection
 * there, empty ones too.
 */
const jsonSink = (stream: Writable) => {
  let collections = 0
  let records = 0
  return {
    begin: (collection: Collection) => {
      const text = `${collections++ === 0 ? "{" : "\n],"}\n${JSON.stringify(collection)}: [`
      records = 0
      return writeTo(stream, text)
    },
    records: (_: Collection, page: ReadonlyArray<ExportRecord>) =>
      writeTo(stream, page.map((r) => `${records++ === 0 ? "\n" : ",\n"}${JSON.stringify(r)}`).join("")),
    finish: () => writeTo(stream, collections === 0 ? "{}\n" : "\n]\n}\n")
  }
}

const CUSTOM = "custom_fields"

/** A cell as the import reads it back (its field's type): text as it is, numbers and booleans written out, lists and objects as JSON. */
const cellOf = (value: unknown): string | undefined =>
  value === undefined || value === null ? undefined : typeof value === "string" ? value : typeof value === "object" ? JSON.stringify(value) : String(value)

/** Where a file is written until the export is whole: moved to its name then, removed if the export stops. */
const partialOf = (path: string) => `${path}.partial`

/** `path`'s partial file moved to `path`. */
const published = (path: string) =>
  Effect.tryPromise({ try: () => rename(partialOf(path), path), catch: (e) => new ExportUnwritable(`Cannot write ${path}: ${(e as Error).message}`) })

const discarded = (paths: ReadonlyArray<string>) => Effect.promise(() => Promise.all(paths.map((path) => rm(partialOf(path), { force: true }))))

/**
 * A CSV file per collection with records, named for it (`members.csv`): a header of the fields an
 * export holds, a custom field of the chamber's definitions as `custom_fields.<key>` (a text value;
 * any other, or a key no definition names, stays in the `custom_fields` cell as JSON). An empty
 * cell is a field not given; an empty string is `""`. Each is written as its partial file; the
 * command moves them all to their names once the export is whole.
 */
const csvSink = (dir: string) => {
  const files: Array<{ readonly collection: Collection; readonly path: string }> = []
  const customKeys = new Map<string, Array<string>>()
  let current: { readonly stream: WriteStream; readonly columns: ReadonlyArray<string>; readonly custom: ReadonlyArray<string> } | undefined
  const line = (cells: ReadonlyArray<string | undefined>) => stringify([cells], { quoted_match: /^$/, record_delimiter: "unix" })
  const close = Effect.suspend(() => {
    const stream = current?.stream
    current = undefined
    return stream === undefined ? Effect.void : closed(stream)
  })
  return {
    files,
    begin: (collection: Collection, total: number) =>
      Effect.gen(function*() {
        yield* close
        if (total === 0) return
        const path = join(dir, `${collection}.csv`)
        const resource = collection === "members" ? "member" : collection === "contacts" ? "contact" : undefined
        const custom = resource === undefined ? [] : customKeys.get(resource) ?? []
        const columns = exportFields(collection)
        const stream = yield* opened(partialOf(path))
        current = { stream, columns, custom }
        files.push({ collection, path })
        yield* writeTo(stream, line([...columns, ...custom.map((k) => `${CUSTOM}.${k}`)]))
      }),
    records: (collection: Collection, page: ReadonlyArray<ExportRecord>) =>
      Effect.suspend(() => {
        if (collection === "fields") {
          for (const f of page) customKeys.set(f.resource as string, [...(customKeys.get(f.resource as string) ?? []), f.key as string])
        }
        const { stream, columns, custom } = current!
        const text = page.map((record) => {
          const rest: Record<string, unknown> = { ...(record[CUSTOM] as Record<string, unknown> | undefined) }
          const own = custom.map((key) => {
            const value = rest[key]
            if (typeof value !== "string") return undefined
            delete rest[key]
            return value
          })
          const cells = columns.map((c) => (c === CUSTOM ? (Object.keys(rest).length === 0 ? undefined : JSON.stringify(rest)) : cellOf(record[c])))
          return line([...cells, ...own])
        }).join("")
        return writeTo(stream, text)
      }),
    finish: () => close
  }
}

const count = (n: number) => n.toLocaleString("en-US")
const total = (counts: ExportResult["counts"]) => Object.values(counts).reduce((a: number, b: number) => a + b, 0)

export const exportData = (opts: ExportOptions) => {
  const started = Date.now()
  const json = opts.json === true
  const format = opts.format ?? "json"
  const toStdout = opts.out === undefined
  const shown = json ? undefined : exportProgress(process.stderr, process.stderr.isTTY === true)
  let files: ReadonlyArray<{ readonly collection: Collection; readonly path: string }> = []
  return run(
    opts,
    Effect.gen(function*() {
      if (format !== "json" && format !== "csv") return yield* Effect.fail(new ExportUnwritable(`--format is json or csv, not "${format}".`))
      if (format === "csv" && toStdout) return yield* Effect.fail(new ExportUnwritable("--format csv writes a file per collection: give the directory with --out DIR."))
      const exporter = yield* Exporter
      const progress = shown === undefined ? undefined : shown.tell
      if (format === "csv") {
        const dir = opts.out!
        yield* Effect.tryPromise({ try: () => mkdir(dir, { recursive: true }), catch: (e) => new ExportUnwritable(`Cannot make ${dir}: ${(e as Error).message}`) })
        const sink = csvSink(dir)
        const result = yield* exporter.run(opts.tenant, sink, { progress }).pipe(
          Effect.tap(() => sink.finish()),
          Effect.onError(() => Effect.andThen(Effect.ignore(sink.finish()), discarded(sink.files.map((f) => f.path))))
        )
        yield* Effect.forEach(sink.files, (f) => published(f.path))
        files = sink.files
        return result
      }
      if (toStdout) {
        const sink = jsonSink(process.stdout)
        const result = yield* exporter.run(opts.tenant, sink, { progress })
        yield* sink.finish()
        return result
      }
      // The document is written beside its place and moved there whole, so FILE is never half an
      // export: stopped by a failure, a lost database or Ctrl-C, it is not written at all.
      const path = opts.out!
      const stream = yield* opened(partialOf(path))
      const sink = jsonSink(stream)
      const result = yield* exporter.run(opts.tenant, sink, { progress }).pipe(
        Effect.tap(() => sink.finish()),
        Effect.ensuring(Effect.ignore(closed(stream))),
        Effect.onError(() => discarded([path]))
      )
      yield* published(path)
      return result
    }).pipe(Effect.ensuring(Effect.sync(() => shown?.end()))),
    {
      json: (result) => ({
        tenant: result.tenant,
        counts: result.counts,
        ...(format === "csv" ? { files: Object.fromEntries(files.map((f) => [f.collection, f.path])) } : { out: opts.out ?? null })
      }),
      human: (result) => {
        const counts = Object.entries(result.counts).filter(([, n]) => n > 0).map(([c, n]) => `${count(n)} ${c}`)
        const what = bold(counts.length === 0 ? "nothing" : counts.join(", "))
        const seconds = ((Date.now() - started) / 1000).toFixed(1)
        const where = format === "csv" ? `to ${files.length} CSV files in ${opts.out}` : toStdout ? "to stdout" : `to ${opts.out}`
        const done = `${green("Exported")} ${what} ${dim(`(${count(total(result.counts))} records) in ${seconds} s`)} ${where}`
        if (format !== "csv" || files.length === 0) return done
        return `${done}\nImport them with: chamber import --tenant ID ${files.map((f) => `--${f.collection} ${f.path}`).join(" ")}`
      }
    },
    undefined,
    toStdout ? "stderr" : "stdout"
  )
}
