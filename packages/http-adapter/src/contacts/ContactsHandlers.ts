/** Contacts handlers: each endpoint of ContactsGroup as one call of the core service. */
import * as Effect from "effect/Effect"
import { Contacts } from "@chamber/core"
import * as Respond from "../server/Respond.ts"
import { groupHandlers } from "../shared/Served.ts"
import { ContactList, ContactResponse, ContactsGroup } from "./ContactsGroup.ts"

export default groupHandlers(ContactsGroup, Effect.fn(function*(handlers) {
  const contacts = yield* Contacts
  return handlers
    .handle("list", ({ query }) => Respond.page(ContactList, query.page, (tenant, page) => contacts.list(tenant, { ...query, page })))
    .handle("search", ({ query }) => Respond.page(ContactList, query.page, (tenant, page) => contacts.search(tenant, { ...query, page })))
    .handle("create", ({ payload }) => Respond.single(ContactResponse, 201, (tenant) => contacts.create(tenant, payload)))
    .handle("update", ({ params, payload }) => Respond.single(ContactResponse, 200, (tenant) => contacts.update(tenant, params.contact, payload)))
    .handle("subscribe", ({ payload }) =>
      Respond.withStatus(ContactResponse, (tenant) => contacts.subscribe(tenant, payload), (r) => [r.outcome === "already" ? 200 : 201, { data: r.contact }]))
}))
