/**
 * Storage port for an import's set-wise writes (docs/architecture.md "Import"): many rows of one
 * collection in one statement, each answered as its repository's insert answers one, in the
 * order given. Runs in the caller's transaction. A batch the database refuses (a slug taken
 * meanwhile, any constraint) fails with `ImportBatchRefused` and writes nothing of it once the
 * caller rolls back to its savepoint; the importer then writes those records one by one, so
 * each is refused with the service's own message.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { Contact, ContactAttributes } from "../contact/Contact.ts"
import type { Member, MemberAttributes } from "../member/Member.ts"

export class ImportBatchRefused extends Schema.TaggedError<ImportBatchRefused>()("ImportBatchRefused", {
  reason: Schema.String
}) {}

export interface ContactRow {
  readonly values: ContactAttributes
  /** The member business the contact works for (ContactRepo.insert's `memberId`). */
  readonly member_id: number | null
}

export class ImportBatches extends Context.Service<ImportBatches, {
  /** Every slug the tenant's members hold. */
  readonly memberSlugs: (tenantId: number) => Effect.Effect<Set<string>>
  readonly insertMembers: (tenantId: number, rows: ReadonlyArray<MemberAttributes>) => Effect.Effect<ReadonlyArray<Member>, ImportBatchRefused>
  /** Contacts as Contacts.create makes them: not subscribed; refused when a `member_id` is no member of the tenant's. */
  readonly insertContacts: (tenantId: number, rows: ReadonlyArray<ContactRow>) => Effect.Effect<ReadonlyArray<Contact>, ImportBatchRefused>
}>()("chamber/ImportBatches") {}
