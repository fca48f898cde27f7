/** Storage port for contacts and their newsletter subscription. Every method is scoped by tenant. */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { Page } from "../Pagination.ts"
import type { Locked } from "../shared/Ports.ts"
import type { SortOrder } from "../Sort.ts"
import type { Contact, ContactAttributes, ContactSortColumns } from "./Contact.ts"

export type ContactSort = SortOrder<(typeof ContactSortColumns)[number]>

export interface ContactFilter {
  /** Exact, case-insensitive. */
  readonly email?: string | undefined
}

/** A contact matched by email, with whether it is subscribed now. */
export interface Subscription {
  readonly id: number
  readonly subscribed: boolean
}

export class ContactRepo extends Context.Service<ContactRepo, {
  readonly list: (tenantId: number, filter: ContactFilter, sort: ContactSort | undefined, page: number, updatedSince?: string) => Effect.Effect<Page<Contact>>
  readonly find: (tenantId: number, id: number) => Effect.Effect<Contact | undefined>
  /** The stored attributes, hidden custom fields included, and what the API shows, read once and locked for an update in this transaction. */
  readonly findForUpdate: (tenantId: number, id: number) => Effect.Effect<Locked<ContactAttributes, Contact> | undefined>
  /** `memberId`: the member business the contact works for, kept for the chamber, never shown. */
  readonly insert: (tenantId: number, values: ContactAttributes, subscribed: boolean, memberId?: number | null) => Effect.Effect<Contact>
  readonly update: (tenantId: number, id: number, changes: Partial<ContactAttributes>) => Effect.Effect<Contact>
  /**
   * Holds, until this transaction ends, the right to subscribe `email` in the tenant (two
   * subscribes of one address take turns), and answers the oldest contact with that address.
   */
  readonly lockEmail: (tenantId: number, email: string) => Effect.Effect<Subscription | undefined>
  readonly setSubscribed: (tenantId: number, id: number, subscribed: boolean) => Effect.Effect<boolean>
}>()("chamber/ContactRepo") {}
