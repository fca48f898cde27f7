/** Member use cases. Writes and their outbox rows commit in one transaction. */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Transactor } from "../shared/Ports.ts"
import { Outbox } from "../outbox/Outbox.ts"
import type { ListQuery, Page } from "../Pagination.ts"
import { parseSort } from "../Sort.ts"
import { type Member, type MemberCreate, MemberResource, MemberSortColumns, type MemberStatus, type MemberUpdate, slugify, uniqueSlug } from "./Member.ts"
import { MemberNotFound, SearchCriteriaMissing, SlugTaken } from "./MemberErrors.ts"
import { MemberRepo } from "./MemberRepo.ts"

export interface MemberListQuery extends ListQuery {
  readonly status?: MemberStatus | undefined
}

export interface MemberSearchQuery extends ListQuery {
  readonly email?: string | undefined
  readonly name?: string | undefined
}

/** Core callers (import, embedders) may also set custom field values. */
type CustomFieldValues = { readonly custom_fields?: Readonly<Record<string, unknown>> | undefined }
export type MemberCreateInput = MemberCreate & CustomFieldValues
export type MemberUpdateInput = MemberUpdate & CustomFieldValues

/**
 * Generated slugs race with other writers of the same name: each conflict means another member
 * took that slug, so the next number is tried; the bound only stops a runaway loop.
 */
const SLUG_ATTEMPTS = 100

/** How a member is created beyond the API's rules: only an import asks for more. */
export interface MemberCreateOptions {
  /** Made without a slug, none generated: a member whose slug was taken away (PATCH `slug: null`), recreated by an import. */
  readonly withoutSlug?: boolean | undefined
}

export class Members extends Context.Service<Members, {
  readonly list: (tenantId: number, query: MemberListQuery) => Effect.Effect<Page<Member>>
  readonly search: (tenantId: number, query: MemberSearchQuery) => Effect.Effect<Page<Member>, SearchCriteriaMissing>
  readonly get: (tenantId: number, id: number) => Effect.Effect<Member, MemberNotFound>
  readonly create: (tenantId: number, input: MemberCreateInput, options?: MemberCreateOptions) => Effect.Effect<Member, SlugTaken>
  readonly update: (tenantId: number, id: number, input: MemberUpdateInput) => Effect.Effect<Member, MemberNotFound | SlugTaken>
}>()("chamber/Members") {
  static readonly layer = Layer.effect(Members, Effect.gen(function*() {
    const repo = yield* MemberRepo
    const outbox = yield* Outbox
    const tx = yield* Transactor

    const list = Effect.fn("Members.list")(function*(tenantId: number, query: MemberListQuery) {
      return yield* repo.list(tenantId, { status: query.status }, parseSort(query.sort, MemberSortColumns), query.page ?? 1, query.updated_since)
    })

    const search = Effect.fn("Members.search")(function*(tenantId: number, query: MemberSearchQuery) {
      const email = query.email?.trim() || undefined
      const name = query.name?.trim() || undefined
      if (email === undefined && name === undefined) return yield* new SearchCriteriaMissing()
      return yield* repo.list(tenantId, { email, name }, parseSort(query.sort, MemberSortColumns), query.page ?? 1, query.updated_since)
    })

    const get = Effect.fn("Members.get")(function*(tenantId: number, id: number) {
      const member = yield* repo.find(tenantId, id)
      if (member === undefined) return yield* new MemberNotFound({ id })
      return member
    })

    /** An explicit slug must be free; a generated one takes the next free number (docs/api.md "Members"). */
    const insertWithSlug = Effect.fnUntraced(function*(tenantId: number, input: MemberCreateInput, options: MemberCreateOptions) {
      const values = MemberResource.defaults(input)
      if (options.withoutSlug === true) return yield* repo.insert(tenantId, { ...values, slug: null })
      if (values.slug !== null) return yield* repo.insert(tenantId, values)
      const base = slugify(values.name)
      const taken = new Set(yield* repo.slugsLike(tenantId, base))
      for (let attempt = 1; ; attempt++) {
        const slug = uniqueSlug(base, taken)
        const inserted = yield* Effect.result(repo.insert(tenantId, { ...values, slug }))
        if (inserted._tag === "Success") return inserted.success
        if (attempt === SLUG_ATTEMPTS) return yield* Effect.die(new Error(`no free slug for ${values.name} after ${attempt} tries`))
        taken.add(slug)
      }
    })

    const create = Effect.fn("Members.create")(function*(tenantId: number, input: MemberCreateInput, options: MemberCreateOptions = {}) {
      return yield* tx.withTransaction(Effect.gen(function*() {
        const member = yield* insertWithSlug(tenantId, input, options)
        yield* outbox.append(tenantId, "member.created", member)
        return member
      }))
    })

    const update = Effect.fn("Members.update")(function*(tenantId: number, id: number, input: MemberUpdateInput) {
      return yield* tx.withTransaction(Effect.gen(function*() {
        const current = yield* repo.findForUpdate(tenantId, id)
        if (current === undefined) return yield* new MemberNotFound({ id })
        const changes = MemberResource.changes(current.stored, input)
        if (Object.keys(changes).length === 0) return current.shown
        const member = yield* repo.update(tenantId, id, changes)
        yield* outbox.append(tenantId, "member.updated", member)
        return member
      }))
    })

    return Members.of({ list, search, get, create, update })
  }))
}
