/** Member use cases. Writes and their outbox rows commit in one transaction. */
import { Context, Effect, Layer } from "effect"
import { NotFound, ValidationFailed } from "../shared/Errors.ts"
import { Transactor } from "../shared/Ports.ts"
import { Outbox } from "../outbox/Outbox.ts"
import type { Page } from "../Pagination.ts"
import { parseSort } from "../Sort.ts"
import {
  type Member,
  type MemberCreate,
  MemberSortColumns,
  type MemberStatus,
  type MemberUpdate,
  type MemberValues,
  slugify,
  uniqueSlug
} from "./Member.ts"
import { MemberRepo } from "./MemberRepo.ts"

export interface MemberListQuery {
  readonly status?: MemberStatus | undefined
  readonly sort?: string | undefined
  readonly page?: number | undefined
}

export interface MemberSearchQuery {
  readonly email?: string | undefined
  readonly name?: string | undefined
  readonly sort?: string | undefined
  readonly page?: number | undefined
}

/** Core callers (import, embedders) may also set custom field values. */
export type MemberCreateInput = MemberCreate & { readonly custom_fields?: Readonly<Record<string, unknown>> | undefined }
export type MemberUpdateInput = MemberUpdate & { readonly custom_fields?: Readonly<Record<string, unknown>> | undefined }

const slugTaken = () => new ValidationFailed({ errors: { slug: ["The slug has already been taken."] } })

const sameValue = (a: unknown, b: unknown): boolean =>
  a === b || (typeof a === "object" && a !== null && typeof b === "object" && b !== null && JSON.stringify(a) === JSON.stringify(b))

export class Members extends Context.Service<Members, {
  readonly list: (tenantId: number, query: MemberListQuery) => Effect.Effect<Page<Member>>
  readonly search: (tenantId: number, query: MemberSearchQuery) => Effect.Effect<Page<Member>, ValidationFailed>
  readonly get: (tenantId: number, id: number) => Effect.Effect<Member, NotFound>
  readonly create: (tenantId: number, input: MemberCreateInput) => Effect.Effect<Member, ValidationFailed>
  readonly update: (tenantId: number, id: number, input: MemberUpdateInput) => Effect.Effect<Member, NotFound | ValidationFailed>
}>()("chamber/Members") {
  static readonly layer = Layer.effect(Members, Effect.gen(function*() {
    const repo = yield* MemberRepo
    const outbox = yield* Outbox
    const tx = yield* Transactor

    const list = Effect.fn("Members.list")(function*(tenantId: number, query: MemberListQuery) {
      return yield* repo.list(tenantId, { status: query.status }, parseSort(query.sort, MemberSortColumns), query.page ?? 1)
    })

    const search = Effect.fn("Members.search")(function*(tenantId: number, query: MemberSearchQuery) {
      const email = query.email?.trim() || undefined
      const name = query.name?.trim() || undefined
      if (email === undefined && name === undefined) {
        return yield* new ValidationFailed({
          errors: {
            email: ["The email field is required when name is not present."],
            name: ["The name field is required when email is not present."]
          }
        })
      }
      return yield* repo.list(tenantId, { email, name }, parseSort(query.sort, MemberSortColumns), query.page ?? 1)
    })

    const get = Effect.fn("Members.get")(function*(tenantId: number, id: number) {
      const member = yield* repo.find(tenantId, id)
      if (member === undefined) return yield* new NotFound({ resource: "member", id: String(id) })
      return member
    })

    const insertWithSlug = Effect.fn("Members.insertWithSlug")(function*(tenantId: number, values: MemberValues, explicit: boolean) {
      for (let attempt = 0; ; attempt++) {
        const slug = explicit
          ? values.slug!
          : uniqueSlug(slugify(values.name), yield* repo.slugsLike(tenantId, slugify(values.name)))
        const result = yield* Effect.result(repo.insert(tenantId, { ...values, slug }))
        if (result._tag === "Success") return result.success
        if (explicit) return yield* slugTaken()
        if (attempt >= 5) return yield* Effect.die(new Error(`could not allocate a slug for ${values.name}`))
      }
    })

    const create = Effect.fn("Members.create")(function*(tenantId: number, input: MemberCreateInput) {
      const explicit = input.slug !== undefined && input.slug !== null
      const values: MemberValues = {
        name: input.name,
        slug: input.slug ?? null,
        status: input.status,
        industry: input.industry ?? null,
        secondary_industries: input.secondary_industries ?? null,
        slogan: input.slogan ?? null,
        about: input.about ?? null,
        website: input.website ?? null,
        email: input.email ?? null,
        phone: input.phone ?? null,
        address_line1: input.address_line1 ?? null,
        address_line2: input.address_line2 ?? null,
        city: input.city ?? null,
        state: input.state ?? null,
        zip: input.zip ?? null,
        member_since: input.member_since ?? null,
        employee_count: input.employee_count ?? null,
        directory_visible: input.directory_visible ?? true,
        custom_fields: input.custom_fields ?? {}
      }
      return yield* tx.withTransaction(Effect.gen(function*() {
        const member = yield* insertWithSlug(tenantId, values, explicit)
        yield* outbox.append(tenantId, "member.created", member)
        return member
      }))
    })

    const update = Effect.fn("Members.update")(function*(tenantId: number, id: number, input: MemberUpdateInput) {
      return yield* tx.withTransaction(Effect.gen(function*() {
        const current = yield* repo.findValues(tenantId, id)
        if (current === undefined) return yield* new NotFound({ resource: "member", id: String(id) })
        const changes: Record<string, unknown> = {}
        for (const [key, value] of Object.entries(input)) {
          if (value === undefined) continue
          if (key === "custom_fields") {
            const merged = { ...current.custom_fields, ...(value as Record<string, unknown>) }
            if (!sameValue(merged, current.custom_fields)) changes.custom_fields = merged
            continue
          }
          // directory_visible is never null: a null leaves it as it is.
          if (key === "directory_visible" && value === null) continue
          if (!sameValue(value, current[key as keyof MemberValues])) changes[key] = value
        }
        if (Object.keys(changes).length === 0) return yield* get(tenantId, id)
        const member = yield* repo.update(tenantId, id, changes as Partial<MemberValues>).pipe(
          Effect.catchTag("SlugTaken", () => Effect.fail(slugTaken()))
        )
        yield* outbox.append(tenantId, "member.updated", member)
        return member
      }))
    })

    return Members.of({ list, search, get, create, update })
  }))
}
