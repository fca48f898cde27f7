/** Contacts (docs/api.md "Contacts and subscribers"): the one declaration of a contact's fields. */
import * as F from "../resource/Field.ts"
import { defineResource } from "../resource/Resource.ts"
import { resourceScopes } from "../resource/ResourceScopes.ts"
import { sortColumns } from "../Sort.ts"

export const ContactScopes = resourceScopes("contacts", ["read", "write"])

export const ContactSortColumns = sortColumns("last_name", "created_at")

export const ContactResource = defineResource("Contact", {
  first_name: F.required(F.filledText(255, "Ann")),
  last_name: F.required(F.filledText(255, "Lee")),
  email: F.nullable(F.email(255, "ann.lee@acme.example")),
  phone: F.nullable(F.text(50, "555-0142")),
  title: F.nullable(F.text(255, "Office Manager")),
  custom_fields: F.readOnly(F.customFields("contact", { newsletter_topics: "events" }))
})

export const Contact = ContactResource.Envelope
export type Contact = typeof Contact.Type
export type ContactAttributes = typeof ContactResource.Attributes.Type
export const ContactCreate = ContactResource.Create
export type ContactCreate = typeof ContactCreate.Type
export const ContactUpdate = ContactResource.Update
export type ContactUpdate = typeof ContactUpdate.Type
