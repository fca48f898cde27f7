/**
 * Contact use cases, newsletter subscribers included (docs/api.md "Contacts and subscribers").
 * A new contact and its contact.created event commit in one transaction; so do a change of what
 * a contact shows and its contact.updated, and a re-subscription and its contact.updated (ruling 34).
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Transactor } from "../shared/Ports.ts"
import type { InvalidInput } from "../shared/Errors.ts"
import { requireOwn } from "../shared/Input.ts"
import { MemberRepo } from "../member/MemberRepo.ts"
import { Outbox } from "../outbox/Outbox.ts"
import { changesShown } from "../outbox/Shown.ts"
import type { ListQuery, Page } from "../Pagination.ts"
import { parseSort } from "../Sort.ts"
import { type Contact, type ContactCreate, ContactResource, ContactSortColumns, type ContactUpdate } from "./Contact.ts"
import { ContactNotFound } from "./ContactErrors.ts"
import { ContactRepo } from "./ContactRepo.ts"

export type ContactListQuery = ListQuery

export interface ContactSearchQuery extends ContactListQuery {
  readonly email: string
}

export interface SubscriberInput {
  readonly email: string
  readonly first_name?: string | null | undefined
  readonly last_name?: string | null | undefined
}

/** What a subscribe did: `created` or `resubscribed` (201), or `already` subscribed (200). */
export interface Subscribed {
  readonly contact: Contact
  readonly outcome: "created" | "resubscribed" | "already"
}

/** Core callers (import, embedders) may also set custom field values. */
type CustomFieldValues = { readonly custom_fields?: Readonly<Record<string, unknown>> | undefined }
/**
 * Core callers may also link the contact to one of the chamber's members (kept, never shown), and
 * make it subscribed to the newsletter at once (an import of one that was, docs/cli.md "Import").
 */
export type ContactCreateInput = ContactCreate & CustomFieldValues & {
  readonly member_id?: number | null | undefined
  readonly subscribed?: boolean | null | undefined
}
export type ContactUpdateInput = ContactUpdate & CustomFieldValues

export class Contacts extends Context.Service<Contacts, {
  readonly list: (tenantId: number, query: ContactListQuery) => Effect.Effect<Page<Contact>>
  readonly search: (tenantId: number, query: ContactSearchQuery) => Effect.Effect<Page<Contact>>
  readonly get: (tenantId: number, id: number) => Effect.Effect<Contact, ContactNotFound>
  readonly create: (tenantId: number, input: ContactCreateInput) => Effect.Effect<Contact, InvalidInput>
  readonly update: (tenantId: number, id: number, input: ContactUpdateInput) => Effect.Effect<Contact, ContactNotFound>
  readonly subscribe: (tenantId: number, input: SubscriberInput) => Effect.Effect<Subscribed>
  readonly unsubscribe: (tenantId: number, id: number) => Effect.Effect<void, ContactNotFound>
}>()("chamber/Contacts") {
  static readonly layer = Layer.effect(Contacts, Effect.gen(function*() {
    const repo = yield* ContactRepo
    const members = yield* MemberRepo
    const outbox = yield* Outbox
    const tx = yield* Transactor

    const list = Effect.fn("Contacts.list")(function*(tenantId: number, query: ContactListQuery) {
      return yield* repo.list(tenantId, {}, parseSort(query.sort, ContactSortColumns), query.page ?? 1, query.updated_since)
    })

    const search = Effect.fn("Contacts.search")(function*(tenantId: number, query: ContactSearchQuery) {
      return yield* repo.list(tenantId, { email: query.email.trim() }, parseSort(query.sort, ContactSortColumns), query.page ?? 1, query.updated_since)
    })

    const get = Effect.fn("Contacts.get")(function*(tenantId: number, id: number) {
      const contact = yield* repo.find(tenantId, id)
      if (contact === undefined) return yield* new ContactNotFound({ id })
      return contact
    })

    /** Inserts and fires contact.created, in the caller's transaction. */
    const insert = (tenantId: number, input: ContactCreateInput, subscribed: boolean) =>
      Effect.tap(
        repo.insert(tenantId, ContactResource.defaults(input), subscribed, input.member_id),
        (contact) => outbox.append(tenantId, "contact.created", contact)
      )

    const create = Effect.fn("Contacts.create")(function*(tenantId: number, input: ContactCreateInput) {
      yield* requireOwn("member_id", input.member_id, (id) => members.find(tenantId, id))
      return yield* tx.withTransaction(insert(tenantId, input, input.subscribed === true))
    })

    const update = Effect.fn("Contacts.update")(function*(tenantId: number, id: number, input: ContactUpdateInput) {
      return yield* tx.withTransaction(Effect.gen(function*() {
        const current = yield* repo.findForUpdate(tenantId, id)
        if (current === undefined) return yield* new ContactNotFound({ id })
        const changes = ContactResource.changes(current.stored, input)
        if (Object.keys(changes).length === 0) return current.shown
        const contact = yield* repo.update(tenantId, id, changes)
        if (changesShown(current.shown, contact)) yield* outbox.append(tenantId, "contact.updated", contact)
        return contact
      }))
    })

    /**
     * Idempotent on the address, case-insensitively: the oldest contact with it is subscribed
     * (again); names are applied only to a new contact. One address subscribes one at a time.
     */
    const subscribe = Effect.fn("Contacts.subscribe")(function*(tenantId: number, input: SubscriberInput) {
      return yield* tx.withTransaction(Effect.gen(function*() {
        const email = input.email.trim()
        const existing = yield* repo.lockEmail(tenantId, email)
        if (existing === undefined) {
          const contact = yield* insert(tenantId, { first_name: input.first_name ?? "", last_name: input.last_name ?? "", email }, true)
          return { contact, outcome: "created" } satisfies Subscribed
        }
        if (!existing.subscribed) yield* repo.setSubscribed(tenantId, existing.id, true)
        const contact = yield* get(tenantId, existing.id).pipe(Effect.orDie)
        // Subscribed again (the 201): an update, though the subscription itself is not shown.
        if (!existing.subscribed) yield* outbox.append(tenantId, "contact.updated", contact)
        return { contact, outcome: existing.subscribed ? "already" : "resubscribed" } satisfies Subscribed
      }))
    })

    const unsubscribe = Effect.fn("Contacts.unsubscribe")(function*(tenantId: number, id: number) {
      if (!(yield* repo.setSubscribed(tenantId, id, false))) return yield* new ContactNotFound({ id })
    })

    return Contacts.of({ list, search, get, create, update, subscribe, unsubscribe })
  }))
}
