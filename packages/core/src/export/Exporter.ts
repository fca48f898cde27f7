/**
 * `chamber export` (docs/cli.md "Export"): a chamber's data as an import document, every collection
 * `chamber import` takes, custom field definitions first. Each record has `ref` = `<collection>:<id>`
 * and names the records it points at with `<thing>_ref`, so that importing the document into
 * another chamber makes the same chamber there. Records are read page by page and handed on as
 * each page is read, so a chamber of any size is never held whole.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { formatCents } from "../resource/Field.ts"
import { TenantRepo } from "../tenant/TenantRepo.ts"
import { TenantNotFound } from "../tenant/TenantErrors.ts"
import { type Collection, ImportCollections } from "../import/ImportSteps.ts"
import { importFields, ImportRefs } from "../import/ImportRecords.ts"
import { ExportRepo, type StoredCollection, type StoredRow } from "./ExportRepo.ts"

/** A record of the document: an import record with its `ref`. */
export type ExportRecord = { readonly ref: string } & Readonly<Record<string, unknown>>

/** Where the records go: told as each collection begins, then given its records a page at a time. */
export interface ExportSink<E> {
  readonly begin: (collection: Collection, total: number) => Effect.Effect<void, E>
  readonly records: (collection: Collection, records: ReadonlyArray<ExportRecord>) => Effect.Effect<void, E>
}

/** Where an export is: told once before the first record (`done` 0) and after each page. */
export interface ExportProgressEvent {
  readonly done: number
  readonly total: number
  readonly collection: Collection
}

export interface ExportOptions {
  readonly progress?: ((event: ExportProgressEvent) => void) | undefined
  /** Records read a statement; 1,000 unless given. */
  readonly pageSize?: number | undefined
}

export interface ExportResult {
  /** The chamber's public id. */
  readonly tenant: string
  readonly counts: Readonly<Record<Collection, number>>
}

/** `members:12`: a record's ref, unique in the document. */
export const exportRef = (collection: Collection, id: number) => `${collection}:${id}`

/** Fields the import takes that an export leaves out: a booking names its type by name, as types are made on import. */
const LEFT_OUT: Partial<Record<StoredCollection, ReadonlySet<string>>> = { bookings: new Set(["booking_type_id"]) }

/**
 * The fields a record of `collection` may hold in an export, in the order the import lists them
 * (`ref` first): the import's fields, refs in place of the ids they stand for.
 */
export const exportFields = (collection: Collection): ReadonlyArray<string> => {
  const refs = ImportRefs[collection]
  const leftOut = collection === "fields" ? undefined : LEFT_OUT[collection]
  return [...importFields(collection).keys()].filter((field) =>
    !(field.endsWith("_id") && refs[`${field.slice(0, -3)}_ref`] !== undefined) && leftOut?.has(field) !== true
  )
}

/** What a collection's record holds beyond its stored fields as they are. */
const ADJUST: Partial<Record<StoredCollection, (record: Record<string, unknown>, row: StoredRow) => void>> = {
  // A member without a slug: `""`, which the import keeps as none (a slug left out is generated).
  members: (record, row) => {
    if (row.slug === null) record.slug = ""
  },
  invoices: (record, row) => {
    const lines = row.lines as ReadonlyArray<{ readonly description: string; readonly unit_cents: number; readonly quantity: number }>
    record.lines = lines.map((l) => ({ description: l.description, unit: formatCents(l.unit_cents), quantity: l.quantity }))
    // Paid is where an open invoice's payments bring it; the payments follow in the document.
    if (record.status === "paid") record.status = "open"
  },
  // Money is sent in dollars.
  payments: (record, row) => {
    record.amount = formatCents(row.amount_cents as number)
  }
}

/**
 * A row as its import record: the fields the import takes, null ones left out; each `<thing>_id`
 * that the collection may send as `<thing>_ref`, as the ref of the record it names.
 */
const recordOf = (collection: StoredCollection) => {
  const fields = importFields(collection)
  const refs = ImportRefs[collection]
  const leftOut = LEFT_OUT[collection]
  const adjust = ADJUST[collection]
  return (row: StoredRow): ExportRecord => {
    const record: Record<string, unknown> = { ref: exportRef(collection, row.id) }
    for (const [field, value] of Object.entries(row)) {
      if (field === "id" || value === null || value === undefined || leftOut?.has(field) === true) continue
      const asRef = field.endsWith("_id") ? `${field.slice(0, -3)}_ref` : undefined
      const target = asRef === undefined ? undefined : refs[asRef]
      if (target !== undefined) record[asRef!] = exportRef(target, Number(value))
      else if (fields.has(field)) record[field] = value
    }
    adjust?.(record, row)
    return record as ExportRecord
  }
}

const PAGE_SIZE = 1_000

export class Exporter extends Context.Service<Exporter, {
  /** Hands every record of the tenant (`chm_…` or its internal id) to `sink`, collection by collection, in the import's order. */
  readonly run: <E>(tenant: string | number, sink: ExportSink<E>, options?: ExportOptions) => Effect.Effect<ExportResult, E | TenantNotFound>
}>()("chamber/Exporter") {
  static readonly layer = Layer.effect(Exporter, Effect.gen(function*() {
    const tenants = yield* TenantRepo
    const repo = yield* ExportRepo

    const run = Effect.fn("Exporter.run")(function*<E>(tenantRef: string | number, sink: ExportSink<E>, options: ExportOptions = {}) {
      const tenant = yield* tenants.find(tenantRef)
      if (tenant === undefined || tenant.deleting_at !== null) {
        return yield* new TenantNotFound({ ref: String(tenantRef), beingDeleted: tenant !== undefined })
      }
      const pageSize = options.pageSize ?? PAGE_SIZE
      const definitions = yield* tenants.listFields(tenant.id)
      // What there is when the export begins: rows written later are left out, so no record names one the document lacks.
      const stored = ImportCollections.filter((c): c is StoredCollection => c !== "fields")
      const extents = new Map(yield* Effect.forEach(stored, (c) => Effect.map(repo.extent(tenant.id, c), (e) => [c, e] as const)))
      const total = definitions.length + [...extents.values()].reduce((n, e) => n + e.count, 0)
      const counts = Object.fromEntries(ImportCollections.map((c) => [c, 0])) as Record<Collection, number>
      let done = 0
      const told = (collection: Collection) => options.progress?.({ done, total, collection })
      told("fields")

      yield* sink.begin("fields", definitions.length)
      const fields = definitions.map((d): ExportRecord => ({ ref: exportRef("fields", d.id), resource: d.resource, key: d.key, label: d.label, api_visible: d.api_visible }))
      if (fields.length > 0) yield* sink.records("fields", fields)
      counts.fields = done = fields.length
      told("fields")

      for (const collection of stored) {
        const { count, last } = extents.get(collection)!
        yield* sink.begin(collection, count)
        const toRecord = recordOf(collection)
        let after = 0
        while (after < last) {
          const rows = yield* repo.page(tenant.id, collection, after, last, pageSize)
          if (rows.length === 0) break
          yield* sink.records(collection, rows.map(toRecord))
          after = rows[rows.length - 1]!.id
          counts[collection] += rows.length
          done += rows.length
          told(collection)
        }
      }
      return { tenant: tenant.public_id, counts } satisfies ExportResult
    })

    return Exporter.of({ run })
  }))
}
