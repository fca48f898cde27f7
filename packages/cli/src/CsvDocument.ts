/**
 * CSV files as an import document (docs/cli.md "CSV files"): a file per collection, its header
 * row the fields as the JSON document spells them, a record a row. A cell is read as its field's
 * type says (importFields, from the schemas that check the record): an unquoted empty cell is a
 * field not given, a quoted one (`""`) an empty string, a list or an object is JSON. Each record
 * keeps the file and line it came from, so that a problem of it is told by file, line and column.
 */
import { parse } from "csv-parse/sync"
import { readFile } from "node:fs/promises"
import { type Collection, describeJsonSyntax, importFields, type ImportFieldType } from "@chamber/core"

export interface CsvFile {
  readonly collection: Collection
  readonly path: string
}

/** A CSV file that cannot be read, is not CSV, or has a header the collection does not take: said before any database work. */
export class CsvUnreadable extends Error {}

/** Where a record or a problem of it is. */
export interface CsvPlace {
  readonly file: string
  /** The line the record begins on, from 1 (the header is line 1). */
  readonly line: number
  /** The column the field came from; null for a rule of the record as a whole. */
  readonly column: string | null
}

export interface CsvDocument {
  /** The import document: each collection's records in file order. */
  readonly document: Readonly<Record<string, ReadonlyArray<Readonly<Record<string, unknown>>>>>
  /** Where a problem the importer reports on `field` of `collection[index]` is. */
  readonly place: (collection: Collection, index: number, field: string | null) => CsvPlace
  /** What a problem's message lacks: the field's cell was meant as JSON and is not. */
  readonly note: (collection: Collection, index: number, field: string | null) => string | undefined
}

const CUSTOM = "custom_fields."
const NUMBER = /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/
const BOOLEAN = /^\s*(true|false)\s*$/i

/** A column of a file: a field of the record, or one key of its custom fields. */
type Column =
  | { readonly name: string; readonly field: string; readonly type: ImportFieldType }
  | { readonly name: string; readonly customKey: string }

const columnsOf = (file: string, collection: Collection, header: ReadonlyArray<string | undefined>): ReadonlyArray<Column> => {
  const fields = importFields(collection)
  const problems: Array<string> = []
  const seen = new Set<string>()
  const columns = header.map((cell, i): Column => {
    const name = (cell ?? "").trim()
    if (name === "") problems.push(`column ${i + 1} has no name`)
    else if (seen.has(name)) problems.push(`the column ${JSON.stringify(name)} comes twice`)
    seen.add(name)
    const type = fields.get(name)
    if (type !== undefined) return { name, field: name, type }
    if (name.startsWith(CUSTOM) && name.length > CUSTOM.length && fields.has("custom_fields")) return { name, customKey: name.slice(CUSTOM.length) }
    if (name !== "") problems.push(`no field of ${collection} is called ${JSON.stringify(name)}`)
    return { name, field: name, type: "text" }
  })
  if (problems.length > 0) {
    const custom = fields.has("custom_fields") ? `, and ${CUSTOM}<key> for a custom field` : ""
    throw new CsvUnreadable(
      `${file} line 1 (the header): ${problems.join("; ")}. The columns of ${collection} are ${[...fields.keys()].join(", ")}${custom}.`
    )
  }
  return columns
}

/** A cell's value as its field's type says; a cell that is not of that type stays text, for the importer's message. */
const cellValue = (type: ImportFieldType, cell: string): { readonly value: unknown; readonly note?: string } => {
  switch (type) {
    case "text":
      return { value: cell }
    case "number":
      return { value: NUMBER.test(cell) ? Number(cell) : cell }
    case "boolean":
      return { value: BOOLEAN.test(cell) ? cell.trim().toLowerCase() === "true" : cell }
    case "json":
      try {
        return { value: JSON.parse(cell) as unknown }
      } catch {
        return { value: cell, note: `the cell is not JSON (${describeJsonSyntax(cell)})` }
      }
  }
}

interface ReadFile {
  readonly records: Array<Record<string, unknown>>
  readonly lines: Array<number>
  readonly columns: ReadonlyArray<Column>
  readonly notes: Map<string, string>
}

/** One file's records, each with the line it begins on. */
const readOne = async ({ collection, path }: CsvFile): Promise<ReadFile> => {
  let bytes: Buffer
  try {
    bytes = await readFile(path)
  } catch (error) {
    throw new CsvUnreadable(`Cannot read ${path}: ${(error as Error).message}`)
  }
  let rows: ReadonlyArray<{ readonly record: ReadonlyArray<string | undefined>; readonly info: { readonly bytes: number } }>
  try {
    rows = parse(bytes, {
      bom: true,
      info: true,
      skip_empty_lines: true,
      // An unquoted empty cell is a field not given; a quoted one is the empty string.
      cast: (value, context) => (value === "" && !context.quoting ? undefined : value)
    }) as unknown as typeof rows
  } catch (error) {
    throw new CsvUnreadable(`${path} is not valid CSV: ${(error as Error).message}.`)
  }
  if (rows.length === 0) throw new CsvUnreadable(`${path} is empty: a CSV file begins with a header row of field names.`)
  const columns = columnsOf(path, collection, rows[0]!.record)

  // A record begins on the line after the previous one ends, past the empty lines the parser skipped.
  const newline = bytes.includes(0x0a) ? 0x0a : 0x0d
  let line = 1
  let at = 0
  /** Moves to `end` (where a record ends), then past empty lines: the line the next record begins on. */
  const nextStart = (end: number) => {
    for (; at < end; at++) if (bytes[at] === newline) line++
    for (; at < bytes.length && (bytes[at] === 0x0a || bytes[at] === 0x0d); at++) if (bytes[at] === newline) line++
    return line
  }

  const records: Array<Record<string, unknown>> = []
  const lines: Array<number> = []
  const notes = new Map<string, string>()
  let begins = nextStart(rows[0]!.info.bytes)
  for (let r = 1; r < rows.length; r++) {
    const { record: cells, info } = rows[r]!
    lines.push(begins)
    begins = nextStart(info.bytes)
    const record: Record<string, unknown> = {}
    const custom: Array<readonly [string, string]> = []
    columns.forEach((column, i) => {
      const cell = cells[i]
      if (cell === undefined) return
      if ("customKey" in column) return custom.push([column.customKey, cell])
      const { value, note } = cellValue(column.type, cell)
      record[column.field] = value
      if (note !== undefined) notes.set(`${records.length}.${column.field}`, note)
    })
    if (custom.length > 0) {
      const given = record.custom_fields
      // Keys of their own columns go into a custom_fields cell's object; a cell that is no object is the importer's to refuse.
      if (given === undefined || (typeof given === "object" && given !== null && !Array.isArray(given))) {
        record.custom_fields = { ...(given as object | undefined), ...Object.fromEntries(custom) }
      }
    }
    records.push(record)
  }
  return { records, lines, columns, notes }
}

/** The files, read whole and in the order of the collections, as one import document. */
export const readCsvDocument = async (files: ReadonlyArray<CsvFile>): Promise<CsvDocument> => {
  const read = new Map<Collection, ReadFile & { readonly file: string }>()
  for (const file of files) read.set(file.collection, { ...(await readOne(file)), file: file.path })
  const of = (collection: Collection) => read.get(collection)!
  return {
    document: Object.fromEntries([...read].map(([collection, r]) => [collection, r.records])),
    place: (collection, index, field) => {
      const r = of(collection)
      const first = field?.split(".")[0]
      const column = field === null ? null : r.columns.some((c) => c.name === field) ? field : first!
      return { file: r.file, line: r.lines[index]!, column }
    },
    note: (collection, index, field) => (field === null ? undefined : of(collection).notes.get(`${index}.${field.split(".")[0]}`))
  }
}
