/** Storage port for members. Every method is scoped by tenant. */
import { Context, type Effect, Schema } from "effect"
import type { Page } from "../Pagination.ts"
import type { SortOrder } from "../Sort.ts"
import type { Member, MemberSortColumns, MemberStatus, MemberValues } from "./Member.ts"

export type MemberSort = SortOrder<(typeof MemberSortColumns)[number]>

export interface MemberFilter {
  readonly status?: MemberStatus | undefined
  /** Exact, case-insensitive. */
  readonly email?: string | undefined
  /** Substring, case-insensitive. */
  readonly name?: string | undefined
}

export class MemberRepo extends Context.Service<MemberRepo, {
  readonly list: (tenantId: number, filter: MemberFilter, sort: MemberSort | undefined, page: number) => Effect.Effect<Page<Member>>
  readonly find: (tenantId: number, id: number) => Effect.Effect<Member | undefined>
  /** Stored values including hidden custom fields, for change detection. */
  readonly findValues: (tenantId: number, id: number) => Effect.Effect<MemberValues | undefined>
  /** Fails with `SlugTaken` when the tenant already has the slug. */
  readonly insert: (tenantId: number, values: MemberValues) => Effect.Effect<Member, SlugTaken>
  readonly update: (tenantId: number, id: number, changes: Partial<MemberValues>) => Effect.Effect<Member, SlugTaken>
  /** Slugs of this tenant equal to `base` or `base-<n>`. */
  readonly slugsLike: (tenantId: number, base: string) => Effect.Effect<ReadonlySet<string>>
}>()("chamber/MemberRepo") {}

export class SlugTaken extends Schema.TaggedError<SlugTaken>()("SlugTaken", { slug: Schema.String }) {}
