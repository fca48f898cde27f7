/**
 * `chamber import` (docs/cli.md "Import"): a JSON document of records loaded through the core
 * services, so each record gets the same validation and fires the same events as any other write,
 * all in one transaction. Records point at earlier ones with `<thing>_ref`; a bad record stops the
 * import, names its collection, index and field, and nothing is written.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { Transactor } from "../shared/Ports.ts"
import { decodeInput } from "../shared/Input.ts"
import { TenantRepo } from "../tenant/TenantRepo.ts"
import { TenantNotFound } from "../tenant/TenantErrors.ts"
import { type Collection, ImportCollections, type ImportStep, importSteps } from "./ImportSteps.ts"
import { ImportDocumentInvalid, ImportRecordInvalid } from "./ImportErrors.ts"

export interface ImportResult {
  /** The id each `ref` got. */
  readonly ids: Readonly<Record<string, number>>
  /** Records written, by collection. */
  readonly counts: Readonly<Record<Collection, number>>
}

/** Records done so far of all the document's records; called after each one. */
export type ImportProgress = (done: number, total: number, collection: Collection) => void

const Ref = Schema.String.check(Schema.makeFilter((s: string) => s.trim() !== "", { message: "The ref field must be a non-empty string." }))
  .annotate({ message: "The ref field must be a non-empty string." })
const RefOf = Schema.Struct({ ref: Schema.optionalKey(Ref) })
const decodeRef = (record: unknown) => decodeInput(RefOf, record)

/** `{field: [message, ...]}` of a failed write, as the file names the fields (`member_id` sent as `member_ref` is `member_ref`). */
const firstError = (error: unknown, record: Readonly<Record<string, unknown>>): { field: string | null; reason: string } => {
  const e = error as { readonly errors?: Readonly<Record<string, ReadonlyArray<string>>>; readonly message?: string }
  const entries = Object.entries(e.errors ?? {})
  if (entries.length === 0) return { field: null, reason: e.message ?? String(error) }
  const [field, messages] = entries[0]!
  const asRef = field.replace(/_id$/, "_ref")
  const more = entries.reduce((n, [, m]) => n + m.length, 0) - 1
  return {
    field: asRef !== field && record[asRef] !== undefined ? asRef : field,
    reason: messages[0]! + (more > 0 ? ` (and ${more} more errors)` : "")
  }
}

export class Importer extends Context.Service<Importer, {
  /** Loads `document` into the tenant (`chm_…` or its internal id); `progress` is told after each record. */
  readonly run: (
    tenant: string | number,
    document: unknown,
    progress?: ImportProgress
  ) => Effect.Effect<ImportResult, ImportRecordInvalid | ImportDocumentInvalid | TenantNotFound>
}>()("chamber/Importer") {
  static readonly layer = Layer.effect(Importer, Effect.gen(function*() {
    const tenants = yield* TenantRepo
    const tx = yield* Transactor
    const steps = yield* importSteps

    const collectionsOf = (document: unknown) =>
      Effect.gen(function*() {
        if (typeof document !== "object" || document === null || Array.isArray(document)) {
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
          const records = (document as Record<string, unknown>)[step.collection]
          if (records === undefined || records === null) continue
          if (!Array.isArray(records)) return yield* new ImportDocumentInvalid({ reason: `The ${step.collection} collection must be a list.` })
          out.push([step, records])
        }
        return out
      })

    const run = Effect.fn("Importer.run")(function*(tenantRef: string | number, document: unknown, progress?: ImportProgress) {
      const tenant = yield* tenants.find(tenantRef)
      if (tenant === undefined) return yield* new TenantNotFound({ ref: String(tenantRef) })
      const collections = yield* collectionsOf(document)
      const total = collections.reduce((n, [, records]) => n + records.length, 0)
      const refs = new Map<string, { readonly collection: Collection; readonly id: number }>()
      const counts = Object.fromEntries(ImportCollections.map((c) => [c, 0])) as Record<Collection, number>
      let done = 0

      const one = (step: ImportStep, index: number, raw: unknown) =>
        Effect.gen(function*() {
          const invalid = (field: string | null, reason: string) => new ImportRecordInvalid({ collection: step.collection, index, field, reason })
          if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return yield* invalid(null, "A record must be a JSON object.")
          const record = raw as Readonly<Record<string, unknown>>
          const { ref } = yield* Effect.mapError(decodeRef(record), () => invalid("ref", "The ref field must be a non-empty string."))
          if (ref !== undefined && refs.has(ref)) return yield* invalid("ref", `The ref ${JSON.stringify(ref)} is already used by an earlier record.`)
          const input: Record<string, unknown> = {}
          for (const [field, value] of Object.entries(record)) {
            if (field === "ref") continue
            const target = step.refs[field]
            if (target === undefined) {
              input[field] = value
              continue
            }
            if (value === null || value === undefined) continue
            const found = typeof value === "string" ? refs.get(value) : undefined
            if (found === undefined || found.collection !== target) {
              return yield* invalid(field, `The ${field.replace(/_/g, " ")} ${JSON.stringify(value)} names no earlier record of ${target}.`)
            }
            input[field.replace(/_ref$/, "_id")] = found.id
          }
          const id = yield* step.write(tenant.id, input).pipe(Effect.mapError((error) => {
            const { field, reason } = firstError(error, record)
            return invalid(field, reason)
          }))
          if (ref !== undefined) refs.set(ref, { collection: step.collection, id })
          counts[step.collection]++
          done++
          if (progress !== undefined) progress(done, total, step.collection)
        })

      yield* tx.withTransaction(Effect.forEach(collections, ([step, records]) => Effect.forEach(records, (raw, i) => one(step, i, raw), { discard: true }), {
        discard: true
      }))
      return { ids: Object.fromEntries([...refs].map(([ref, { id }]) => [ref, id])), counts }
    })

    return Importer.of({ run })
  }))
}
