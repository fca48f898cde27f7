/**
 * `chamber import` (docs/cli.md "Import"): a JSON document of records loaded with the core
 * services' rules, so each record gets the same validation and fires the same events as any other
 * write, all or nothing: in one transaction, or, where the database is one session that a long
 * transaction would hold (ImportHolds.sliced), in slices under a hold shown at once. Records
 * point at earlier ones with `<thing>_ref`. Every collection but fields is written set-wise, a
 * batch at a time (ImportBatchWrites.ts); fields through their service, one record at a time.
 * Each transaction (the import's, or each slice's) writes its events last, each numbered in the
 * chamber's feed as it is written (Outbox `appendingAtEnd`).
 *
 * Two passes: every record is checked first, with nothing written and no transaction open, and
 * every problem is reported (the first 100, with the count of all); only a document without any
 * is written. Rules that need the database are met while writing; a record that breaks one is
 * reported too, the others are still tried, and then nothing of the file is committed.
 *
 * With `skipInvalid` a record with a problem is refused instead, and so is one whose ref names a
 * refused record; the others are written and committed, and the refused ones returned with
 * their problems.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { Outbox } from "../outbox/Outbox.ts"
import { Transactor } from "../shared/Ports.ts"
import { decodeInput } from "../shared/Input.ts"
import { TenantRepo } from "../tenant/TenantRepo.ts"
import { TenantNotFound } from "../tenant/TenantErrors.ts"
import { type Collection, ImportCollections, type ImportStep, importSteps } from "./ImportSteps.ts"
import { type BatchWrites, importBatchWrites } from "./ImportBatchWrites.ts"
import { ImportHolds } from "./ImportHolds.ts"
import { sweepAbandonedImports } from "./ImportSweeper.ts"
import { ImportDocumentInvalid, ImportInvalid, type ImportProblem, MAX_REPORTED_PROBLEMS } from "./ImportErrors.ts"

/** A record that `skipInvalid` refused: where it is in the document, what it holds, and every problem it has. */
export interface ImportRejected {
  readonly collection: Collection
  /** The record's index in its collection, from 0. */
  readonly index: number
  readonly ref: string | null
  readonly record: unknown
  readonly problems: ReadonlyArray<Pick<ImportProblem, "field" | "message">>
}

export interface ImportResult {
  /** The id each `ref` got; none on a dry run. */
  readonly ids: Readonly<Record<string, number>>
  /** Records written by collection; on a dry run, the records checked (with `skipInvalid`, those that would be written). */
  readonly counts: Readonly<Record<Collection, number>>
  readonly dryRun: boolean
  /** With `skipInvalid`, the records refused, in document order; else none. */
  readonly rejected: ReadonlyArray<ImportRejected>
  /** True when the records were written in slices under a hold and published at once (ImportHolds), false when in one transaction. */
  readonly sliced: boolean
}

/** Where an import is: told once as each pass begins (`done` 0) and after each record. */
export interface ImportProgressEvent {
  /** `checking`: every record, nothing written; `writing`: the records written. */
  readonly phase: "checking" | "writing"
  readonly done: number
  readonly total: number
  readonly collection: Collection
}
export type ImportProgress = (event: ImportProgressEvent) => void

export interface ImportOptions {
  readonly progress?: ImportProgress | undefined
  /** Check every record and write nothing. */
  readonly dryRun?: boolean | undefined
  /**
   * Refuse each record with a problem, and each whose ref names a refused record, and
   * write the others; the result lists those refused. Without it one problem refuses the whole.
   */
  readonly skipInvalid?: boolean | undefined
  /** false: every record through its core service, one by one (what the set-wise writes are compared with); else the collections ImportBatchWrites.ts writes set-wise. */
  readonly batched?: boolean | undefined
}

const Ref = Schema.String.check(Schema.makeFilter((s: string) => s.trim() !== "", { message: "The ref field must be a non-empty string." }))
  .annotate({ message: "The ref field must be a non-empty string." })
const RefOf = Schema.Struct({ ref: Schema.optionalKey(Ref) })
const decodeRef = (record: unknown) => decodeInput(RefOf, record)

type Found = Pick<ImportProblem, "field" | "message">

/**
 * What a failed check or write says, field by field, as the file names the fields (`member_id`
 * sent as `member_ref` is `member_ref`); a rule of the record as a whole has no field.
 */
const problemsOf = (error: unknown, record: Readonly<Record<string, unknown>>): ReadonlyArray<Found> => {
  const e = error as { readonly errors?: Readonly<Record<string, ReadonlyArray<string>>>; readonly message?: string }
  const entries = Object.entries(e.errors ?? {})
  if (entries.length === 0) return [{ field: null, message: e.message ?? String(error) }]
  return entries.flatMap(([field, messages]) => {
    const asRef = field.replace(/_id$/, "_ref")
    const named = field === "input" ? null : asRef !== field && record[asRef] !== undefined ? asRef : field
    return messages.map((message) => ({ field: named, message }))
  })
}

/** The problems of a document: the first MAX_REPORTED_PROBLEMS kept, all counted. */
const problemList = () => {
  const shown: Array<ImportProblem> = []
  let problems = 0
  let records = 0
  return {
    add(collection: Collection, index: number, ref: string | null, found: ReadonlyArray<Found>) {
      if (found.length === 0) return
      records++
      for (const f of found) {
        problems++
        if (shown.length < MAX_REPORTED_PROBLEMS) shown.push({ collection, index, ref, ...f })
      }
    },
    get any() {
      return problems > 0
    },
    error: () => new ImportInvalid({ problems: shown, problem_count: problems, record_count: records })
  }
}

/** Where a record is: `members[2]`. */
const placeOf = (collection: Collection, index: number) => `${collection}[${index}]`

/**
 * Where the problems of a pass go: without `skipInvalid` into the list that refuses the whole
 * document; with it, into the records refused (each ref of one is remembered, for the records
 * that name it).
 */
const outcome = (skipInvalid: boolean) => {
  const problems = problemList()
  const rejected: Array<ImportRejected> = []
  const refusedRefs = new Map<string, string>()
  return {
    /** Reports a record's problems, if any; `owned` is the ref the record holds as its own. */
    report(collection: Collection, index: number, ref: string | null, owned: string | undefined, record: unknown, found: ReadonlyArray<Found>) {
      if (!skipInvalid) return problems.add(collection, index, ref, found)
      if (found.length === 0) return
      rejected.push({ collection, index, ref, record, problems: found })
      if (owned !== undefined) refusedRefs.set(owned, placeOf(collection, index))
    },
    /** Where the record a ref names is, when it was refused. */
    refused: (ref: string) => refusedRefs.get(ref),
    rejected,
    problems
  }
}

/**
 * Records of a collection written set-wise at a time: 1,000 in one transaction; 250 where the
 * import is written in slices (ImportHolds), so that a slice holds the embedded database's one
 * session for tens of milliseconds, not hundreds.
 */
export const importBatch = (sliced: boolean): number => (sliced ? 250 : 1000)

const isRecord = (raw: unknown): raw is Readonly<Record<string, unknown>> => typeof raw === "object" && raw !== null && !Array.isArray(raw)

/**
 * A payment naming an invoice by id pays one the chamber already has, changing a row that no hold
 * can keep from being seen: a document holding one is written in one transaction, also where
 * imports are otherwise sliced.
 */
const paysWhatExists = (collections: ReadonlyArray<readonly [ImportStep, ReadonlyArray<unknown>]>) =>
  collections.some(([step, records]) =>
    step.collection === "payments" && records.some((r) => isRecord(r) && r.invoice_id !== undefined && r.invoice_id !== null)
  )

export class Importer extends Context.Service<Importer, {
  /**
   * Loads `document` into the tenant (`chm_…` or its internal id), or with `dryRun` only checks
   * it; `progress` is told as each record is checked and written.
   */
  readonly run: (
    tenant: string | number,
    document: unknown,
    options?: ImportOptions
  ) => Effect.Effect<ImportResult, ImportInvalid | ImportDocumentInvalid | TenantNotFound>
}>()("chamber/Importer") {
  static readonly layer = Layer.effect(Importer, Effect.gen(function*() {
    const tenants = yield* TenantRepo
    const tx = yield* Transactor
    const holds = yield* ImportHolds
    const outbox = yield* Outbox
    const steps = yield* importSteps
    const batchWrites = yield* importBatchWrites

    const collectionsOf = (document: unknown) =>
      Effect.gen(function*() {
        if (!isRecord(document)) {
          return yield* new ImportDocumentInvalid({ reason: "The import must be a JSON object of collections (members, contacts, ...)." })
        }
        const unknown = Object.keys(document).filter((k) => !(ImportCollections as ReadonlyArray<string>).includes(k))
        if (unknown.length > 0) {
          return yield* new ImportDocumentInvalid({
            reason: `Unknown collection ${JSON.stringify(unknown[0])}; the collections are ${ImportCollections.join(", ")}.`
          })
        }
        const out: Array<readonly [ImportStep, ReadonlyArray<unknown>]> = []
        for (const step of steps) {
          const records = document[step.collection]
          if (records === undefined || records === null) continue
          if (!Array.isArray(records)) return yield* new ImportDocumentInvalid({ reason: `The ${step.collection} collection must be a list.` })
          out.push([step, records])
        }
        return out
      })

    /**
     * Every record checked, nothing written: its shape, its ref (unique in the file), the refs it
     * makes (each an earlier record of the right collection) and the rules of its collection.
     */
    const checkAll = Effect.fnUntraced(function*(
      collections: ReadonlyArray<readonly [ImportStep, ReadonlyArray<unknown>]>,
      tick: (collection: Collection) => void,
      skipInvalid: boolean
    ) {
      const result = outcome(skipInvalid)
      const refs = new Map<string, { readonly collection: Collection; readonly index: number }>()
      for (const [step, records] of collections) {
        for (let index = 0; index < records.length; index++) {
          const raw = records[index]
          if (!isRecord(raw)) {
            result.report(step.collection, index, null, undefined, raw, [{ field: null, message: "A record must be a JSON object." }])
            tick(step.collection)
            continue
          }
          const found: Array<Found> = []
          const decoded = Result.getOrUndefined(yield* Effect.result(decodeRef(raw)))
          if (decoded === undefined) found.push({ field: "ref", message: "The ref field must be a non-empty string." })
          const ref = decoded?.ref
          const earlier = ref === undefined ? undefined : refs.get(ref)
          if (earlier !== undefined) {
            found.push({ field: "ref", message: `The ref ${JSON.stringify(ref)} is already used by ${earlier.collection}[${earlier.index}].` })
          } else if (ref !== undefined) refs.set(ref, { collection: step.collection, index })

          // Each ref stands in for an id here, so the rules of the record are checked as when it is written.
          const input: Record<string, unknown> = {}
          for (const [field, value] of Object.entries(raw)) {
            if (field === "ref") continue
            const target = step.refs[field]
            if (target === undefined) input[field] = value
            else if (value !== null && value !== undefined) {
              const named = typeof value === "string" ? refs.get(value) : undefined
              const refused = named === undefined ? undefined : result.refused(value as string)
              if (named === undefined || named.collection !== target) {
                found.push({ field, message: `The ${field.replace(/_/g, " ")} ${JSON.stringify(value)} names no earlier record of ${target}.` })
              } else if (refused !== undefined) {
                found.push({ field, message: `The ${field.replace(/_/g, " ")} ${JSON.stringify(value)} names ${refused}, which was refused.` })
              }
              input[field.replace(/_ref$/, "_id")] = 1
            }
          }
          const checked = yield* Effect.result(step.check(input))
          if (Result.isFailure(checked)) found.push(...problemsOf(checked.failure, raw))
          const owned = earlier === undefined ? ref : undefined
          result.report(step.collection, index, typeof raw.ref === "string" ? raw.ref : null, owned, raw, found)
          tick(step.collection)
        }
      }
      if (result.problems.any) return yield* result.problems.error()
      return result.rejected
    })

    /**
     * Every record written in file order, in the transaction the caller opened. A record that
     * breaks a rule of the database is reported, so is one whose ref names such a record, and
     * the others are still written; then the whole is refused (rolled back). With `skipInvalid`
     * the records the check refused are passed over, and a record refused here is rolled back
     * alone, with those whose refs name it.
     *
     * The collections `batches` can write go `importBatch` records at a time, each batch in a savepoint;
     * a batch that fails is rolled back and its records written one by one, as above.
     *
     * `slice` runs each batch's work (a batch, or one record of a collection written one by
     * one): within the caller's transaction, or as a transaction of its own under an import's
     * hold (ImportHolds).
     */
    const writeAll = Effect.fnUntraced(function*(
      tenantId: number,
      collections: ReadonlyArray<readonly [ImportStep, ReadonlyArray<unknown>]>,
      tick: (collection: Collection) => void,
      skipInvalid: boolean,
      refusedPlaces: ReadonlySet<string>,
      batches: BatchWrites,
      sliced: boolean,
      slice: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
    ) {
      const result = outcome(skipInvalid)
      const ids = new Map<string, number>()
      const unwritten = new Map<string, string>()
      const counts = Object.fromEntries(ImportCollections.map((c) => [c, 0])) as Record<Collection, number>

      interface Pending {
        readonly index: number
        readonly record: Readonly<Record<string, unknown>>
        readonly ref: string | null
        readonly input: Record<string, unknown>
        readonly found: Array<Found>
        id?: number
      }
      /** A record with its refs replaced by ids; a ref naming a record not written is a problem. */
      const prepare = (step: ImportStep, records: ReadonlyArray<unknown>, index: number): Pending => {
        const record = records[index] as Readonly<Record<string, unknown>>
        const found: Array<Found> = []
        const input: Record<string, unknown> = {}
        for (const [field, value] of Object.entries(record)) {
          if (field === "ref") continue
          if (step.refs[field] === undefined) input[field] = value
          else if (value !== null && value !== undefined) {
            const id = ids.get(value as string)
            if (id === undefined) {
              found.push({ field, message: `The ${field.replace(/_/g, " ")} ${JSON.stringify(value)} names ${unwritten.get(value as string)}, which could not be written.` })
            }
            input[field.replace(/_ref$/, "_id")] = id
          }
        }
        return { index, record, ref: typeof record.ref === "string" ? record.ref : null, input, found }
      }
      const settle = (step: ImportStep, p: Pending) => {
        if (p.id !== undefined) {
          if (p.ref !== null) ids.set(p.ref, p.id)
          counts[step.collection]++
        }
        if (p.found.length > 0 && p.ref !== null) unwritten.set(p.ref, placeOf(step.collection, p.index))
        result.report(step.collection, p.index, p.ref, undefined, p.record, p.found)
        tick(step.collection)
      }

      for (const [step, records] of collections) {
        const batch = batches[step.collection]
        const size = batch === undefined ? 1 : importBatch(sliced)
        for (let start = 0; start < records.length; start += size) {
          const chunk: Array<Pending> = []
          for (let index = start; index < Math.min(start + size, records.length); index++) {
            if (refusedPlaces.has(placeOf(step.collection, index))) tick(step.collection)
            else chunk.push(prepare(step, records, index))
          }
          const ready = chunk.filter((p) => p.found.length === 0)
          if (ready.length > 0) {
            yield* slice(Effect.gen(function*() {
              if (batch !== undefined) {
                const written = yield* Effect.result(tx.withTransaction(batch(ready.map((p) => p.input))))
                if (Result.isSuccess(written)) ready.forEach((p, i) => (p.id = written.success[i]))
              }
              for (const p of ready) {
                if (p.id !== undefined) continue
                // A refused record takes back what it wrote (its savepoint); the others stay.
                const id = yield* Effect.result(skipInvalid ? tx.withTransaction(step.write(tenantId, p.input)) : step.write(tenantId, p.input))
                if (Result.isSuccess(id)) p.id = id.success
                else p.found.push(...problemsOf(id.failure, p.record))
              }
            }))
          }
          for (const p of chunk) settle(step, p)
        }
      }
      if (result.problems.any) return yield* result.problems.error()
      return { ids: Object.fromEntries(ids), counts, rejected: result.rejected }
    })

    /**
     * The write under a hold of its own: each slice commits as it goes, nothing of it shown; the
     * hold is published once every record is written, and discarded when the write fails or is
     * interrupted, so the chamber ends with all of the file or none of it.
     */
    const slicedWrite = <A, E, R>(tenantId: number, write: (slice: <X, Y, Z>(self: Effect.Effect<X, Y, Z>) => Effect.Effect<X, Y, Z>) => Effect.Effect<A, E, R>) =>
      Effect.acquireUseRelease(
        Effect.andThen(Effect.provideService(sweepAbandonedImports, ImportHolds, holds), holds.open(tenantId)),
        (hold) => Effect.tap(write((self) => holds.slice(hold, outbox.appendingAtEnd(tenantId, self))), () => holds.publish(hold)),
        (hold, exit) => (Exit.isSuccess(exit) ? Effect.void : holds.discard(hold))
      )

    const run = Effect.fn("Importer.run")(function*(tenantRef: string | number, document: unknown, options: ImportOptions = {}) {
      const tenant = yield* tenants.find(tenantRef)
      if (tenant === undefined) return yield* new TenantNotFound({ ref: String(tenantRef) })
      if (tenant.deleting_at !== null) return yield* new TenantNotFound({ ref: tenant.public_id, beingDeleted: true })
      const collections = yield* collectionsOf(document)
      const total = collections.reduce((n, [, records]) => n + records.length, 0)
      const ticker = (phase: ImportProgressEvent["phase"]) => {
        const progress = options.progress
        if (progress === undefined) return () => {}
        let done = 0
        progress({ phase, done, total, collection: collections[0]?.[0].collection ?? "members" })
        return (collection: Collection) => progress({ phase, done: ++done, total, collection })
      }

      const skipInvalid = options.skipInvalid === true
      const refused = yield* checkAll(collections, ticker("checking"), skipInvalid)
      if (options.dryRun === true) {
        const counts = Object.fromEntries(ImportCollections.map((c) => [c, 0])) as Record<Collection, number>
        for (const [step, records] of collections) counts[step.collection] = records.length
        for (const r of refused) counts[r.collection]--
        return { ids: {}, counts, dryRun: true, rejected: refused, sliced: false } satisfies ImportResult
      }
      const refusedPlaces = new Set(refused.map((r) => placeOf(r.collection, r.index)))
      const batches = options.batched === false ? {} : batchWrites(tenant.id)
      const sliced = holds.sliced && !paysWhatExists(collections)
      const written = yield* (sliced
        ? slicedWrite(tenant.id, (slice) => writeAll(tenant.id, collections, ticker("writing"), skipInvalid, refusedPlaces, batches, true, slice))
        : tx.withTransaction(outbox.appendingAtEnd(tenant.id, writeAll(tenant.id, collections, ticker("writing"), skipInvalid, refusedPlaces, batches, false, (self) => self))))
      // Those refused on a rule of the database join those the check refused, in document order.
      const order = new Map(collections.map(([step], i) => [step.collection, i]))
      const rejected = [...refused, ...written.rejected].sort((a, b) => order.get(a.collection)! - order.get(b.collection)! || a.index - b.index)
      return { ...written, rejected, dryRun: false, sliced } satisfies ImportResult
    })

    return Importer.of({ run })
  }))
}
