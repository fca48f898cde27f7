/** The contacts and subscribers endpoints (docs/api.md "Contacts and subscribers"): the contract only. */
import * as Schema from "effect/Schema"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import { Contact, ContactCreate, ContactResource, ContactSortColumns, ContactUpdate, Field } from "@chamber/core"
import { Authentication, Idempotent } from "../shared/Access.ts"
import { createEndpoint, listEndpoint, updateEndpoint } from "../shared/Endpoints.ts"
import { ValidationError } from "../shared/HttpErrors.ts"
import { operation } from "../shared/Operation.ts"
import { ListParams } from "../shared/Params.ts"
import { single } from "../shared/Responses.ts"

export const ContactResponse = single(Contact)
export const ContactList = ContactResource.List

const sortDoc = "`sort`: last_name, -last_name, created_at, -created_at, updated_at or -updated_at (default: by last name); anything else means the default."

export const SubscriberCreate = Schema.Struct({
  email: Field.email(255, "ann.lee@acme.example").schema.pipe(Schema.annotateKey({ messageMissingKey: "The {field} field is required." })),
  first_name: Schema.optionalKey(Schema.NullOr(Field.text(255, "Ann").schema).annotate({ message: "The {field} field must be a string." })),
  last_name: Schema.optionalKey(Schema.NullOr(Field.text(255, "Lee").schema).annotate({ message: "The {field} field must be a string." }))
}).annotate({ identifier: "SubscriberCreate", examples: [{ email: "ann.lee@acme.example", first_name: "Ann", last_name: "Lee" }] })

export class ContactsGroup extends HttpApiGroup.make("contacts")
  .add(
    listEndpoint("/api/v1/contacts", ContactList, { access: "contacts:read", sort: ContactSortColumns, summary: "List contacts", description: `The chamber's contacts, 100 a page. ${sortDoc}` }),
    createEndpoint("/api/v1/contacts", ContactCreate, ContactResponse, {
      access: "contacts:write",
      summary: "Create a contact",
      description: "`first_name` and `last_name` are required. Fires `contact.created`."
    }),
    HttpApiEndpoint.get("search", "/api/v1/contacts/search", {
      query: {
        email: Field.email(255, "ann.lee@acme.example").schema.pipe(Schema.annotateKey({ messageMissingKey: "The {field} field is required." })),
        ...ListParams
      },
      success: ContactList,
      error: ValidationError
    }).pipe(operation({
      access: "contacts:read",
      sort: ContactSortColumns,
      summary: "Search contacts",
      description: `By \`email\` (required; exact, case-insensitive). ${sortDoc}`
    })),
    updateEndpoint("/api/v1/contacts/:contact", "contact", ContactUpdate, ContactResponse, { access: "contacts:write", summary: "Update a contact", description: "Only the fields sent change. Fires `contact.updated` when what the contact shows changed." }),
    HttpApiEndpoint.post("subscribe", "/api/v1/subscribers", {
      payload: SubscriberCreate,
      success: [ContactResponse, ContactResponse.pipe(HttpApiSchema.status(201))],
      error: ValidationError
    }).pipe(operation({
      access: "contacts:write",
      summary: "Subscribe an address to the newsletter",
      description:
        "Idempotent on `email`, case-insensitively: 201 with a new contact (firing `contact.created`) or when an " +
        "unsubscribed contact is subscribed again (firing `contact.updated`); 200 when the contact is already subscribed (firing nothing). Names are applied only " +
        "to a new contact, never over stored ones."
    }))
  )
  .middleware(Idempotent).middleware(Authentication)
  .annotateMerge(OpenApi.annotations({ description: "The chamber's contacts and newsletter subscribers." })) {}
