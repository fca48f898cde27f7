/**
 * The collections an import writes set-wise (docs/architecture.md "Import"): members and
 * contacts, each batch one insert and one append of its events, with what Members.create and
 * Contacts.create do for each record: the same defaults, the same slugs, the same events with the
 * same bodies (core test import-batches.test.ts compares the two paths' feeds). A batch whose
 * records the services would refuse (an explicit slug already taken) or that the database
 * refuses fails with ImportBatchRefused; the importer then writes its records one by one through
 * the services. The other collections are written one by one always.
 */
import * as Effect from "effect/Effect"
import { ContactResource } from "../contact/Contact.ts"
import { MemberResource, slugify } from "../member/Member.ts"
import { Outbox } from "../outbox/Outbox.ts"
import { decodeInput } from "../shared/Input.ts"
import { ImportBatches, ImportBatchRefused } from "./ImportBatches.ts"
import { ContactRecord, MemberRecord } from "./ImportRecords.ts"
import type { Collection } from "./ImportSteps.ts"

/** Writes the records of one batch (refs already replaced by ids); their ids, in order. */
export type BatchWrite = (inputs: ReadonlyArray<Readonly<Record<string, unknown>>>) => Effect.Effect<ReadonlyArray<number>, ImportBatchRefused>
export type BatchWrites = Partial<Record<Collection, BatchWrite>>

const decoded = <A>(self: Effect.Effect<A, unknown>) => Effect.mapError(self, () => new ImportBatchRefused({ reason: "a record does not decode" }))

/** The batch writers of one import into one tenant, over the storage port. */
export const importBatchWrites = Effect.gen(function*() {
  const batches = yield* ImportBatches
  const outbox = yield* Outbox

  return (tenantId: number): BatchWrites => {
    // The tenant's slugs, with those this import has given: read once, and again after a batch
    // failed (its records then went through Members.create, which picks slugs of its own).
    let slugs: Set<string> | undefined

    const members: BatchWrite = (inputs) =>
      Effect.gen(function*() {
        if (slugs === undefined) slugs = yield* batches.memberSlugs(tenantId)
        const taken = slugs
        const given = new Set<string>()
        const has = (slug: string) => taken.has(slug) || given.has(slug)
        const rows = []
        for (const input of inputs) {
          const values = MemberResource.defaults(yield* decoded(decodeInput(MemberRecord, input)))
          // As Members.create: an explicit slug must be free, a generated one takes the next free number.
          let slug = values.slug
          if (slug !== null && has(slug)) return yield* new ImportBatchRefused({ reason: `the slug ${slug} is taken` })
          if (slug === null) {
            const base = slugify(values.name)
            slug = base
            for (let n = 2; has(slug); n++) slug = `${base}-${n}`
          }
          given.add(slug)
          rows.push({ ...values, slug })
        }
        const written = yield* batches.insertMembers(tenantId, rows)
        yield* outbox.appendAll(tenantId, "member.created", written)
        for (const slug of given) taken.add(slug)
        return written.map((m) => m.id)
      }).pipe(Effect.tapError(() => Effect.sync(() => (slugs = undefined))))

    const contacts: BatchWrite = (inputs) =>
      Effect.gen(function*() {
        const rows = []
        for (const input of inputs) {
          const contact = yield* decoded(decodeInput(ContactRecord, input))
          rows.push({ values: ContactResource.defaults(contact), member_id: contact.member_id ?? null })
        }
        const written = yield* batches.insertContacts(tenantId, rows)
        yield* outbox.appendAll(tenantId, "contact.created", written)
        return written.map((c) => c.id)
      })

    return { members, contacts }
  }
})
