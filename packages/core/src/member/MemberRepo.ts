/** Storage port for members. Every method is scoped by tenant. */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { Page } from "../Pagination.ts"
import type { Locked } from "../shared/Ports.ts"
import type { SortOrder } from "../Sort.ts"
import type { Member, MemberAttributes, MemberSortColumns, MemberStatus } from "./Member.ts"
import type { SlugTaken } from "./MemberErrors.ts"

export type MemberSort = SortOrder<(typeof MemberSortColumns)[number]>

export interface MemberFilter {
  readonly status?: MemberStatus | undefined
  /** Exact, case-insensitive. */
  readonly email?: string | undefined
  /** Substring, case-insensitive. */
  readonly name?: string | undefined
}

export class MemberRepo extends Context.Service<MemberRepo, {
  readonly list: (tenantId: number, filter: MemberFilter, sort: MemberSort | undefined, page: number, updatedSince?: string) => Effect.Effect<Page<Member>>
  readonly find: (tenantId: number, id: number) => Effect.Effect<Member | undefined>
  /** The stored attributes, hidden custom fields included, and what the API shows, read once and locked for an update in this transaction. */
  readonly findForUpdate: (tenantId: number, id: number) => Effect.Effect<Locked<MemberAttributes, Member> | undefined>
  /** Fails with `SlugTaken` when the tenant already has the slug (and leaves the transaction usable). */
  readonly insert: (tenantId: number, values: MemberAttributes) => Effect.Effect<Member, SlugTaken>
  readonly update: (tenantId: number, id: number, changes: Partial<MemberAttributes>) => Effect.Effect<Member, SlugTaken>
  /** Slugs of this tenant equal to `base` or `base-<n>`. */
  readonly slugsLike: (tenantId: number, base: string) => Effect.Effect<ReadonlySet<string>>
}>()("chamber/MemberRepo") {}
