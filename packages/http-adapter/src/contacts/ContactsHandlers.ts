/** Contacts handlers: each endpoint of ContactsGroup as one call of the core service. */
import * as Effect from "effect/Effect"
import { Contacts } from "@chamber/core"
import * as Kit from "../server/Kit.ts"
import { group } from "../server/Group.ts"
import { ContactList, ContactResponse } from "./ContactsGroup.ts"

export const ContactsHandlers = group("contacts", Effect.fn(function*(handlers) {
  const contacts = yield* Contacts
  return handlers
    .handle("list", ({ query }) => Kit.page(ContactList, query.page, (tenant, page) => contacts.list(tenant, { ...query, page })))
    .handle("search", ({ query }) => Kit.page(ContactList, query.page, (tenant, page) => contacts.search(tenant, { ...query, page })))
    .handle("create", ({ payload }) => Kit.single(ContactResponse, 201, (tenant) => contacts.create(tenant, payload)))
    .handle("update", ({ params, payload }) => Kit.single(ContactResponse, 200, (tenant) => contacts.update(tenant, params.contact, payload)))
    .handle("subscribe", ({ payload }) =>
      Kit.withStatus(ContactResponse, (tenant) => contacts.subscribe(tenant, payload), (r) => [r.outcome === "already" ? 200 : 201, { data: r.contact }]))
}))
