/**
 * What a record of each collection of an import may hold (docs/cli.md "Import"): the schemas
 * that check it, the `<thing>_ref` fields it may carry, and from those the JSON type of each of
 * its fields, which is how a CSV cell of that field is read.
 */
import * as Schema from "effect/Schema"
import * as F from "../resource/Field.ts"
import { BookingCreate } from "../booking/Bookings.ts"
import { ContactCreate } from "../contact/Contact.ts"
import { DealCreate } from "../deal/Deal.ts"
import { EventCreate, EventStatuses } from "../event/Event.ts"
import { InvoiceCreate } from "../invoice/Invoice.ts"
import { MemberCreate } from "../member/Member.ts"
import { PaymentCreate } from "../payment/Payment.ts"
import { PlacementCreate } from "../placement/Placements.ts"
import { RegistrationCreate } from "../registration/Registration.ts"
import { SponsorshipCreate } from "../sponsorship/Sponsorships.ts"
import { CustomFieldResources } from "../tenant/Tenant.ts"
import { FIELD_KEY } from "../tenant/Tenants.ts"
import type { Collection } from "./ImportSteps.ts"

const CustomFields = Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown).annotate({ message: "The {field} field must be an object." }))
const OptionalId = Schema.optionalKey(Schema.NullOr(F.bigInteger(1, 1).schema))
const RequiredId = F.bigInteger(1, 1).schema.pipe(Schema.annotateKey({ messageMissingKey: "The {field} field is required." }))

/** A custom field definition, as `chamber field add` takes it. */
export const FieldRecord = Schema.Struct({
  resource: F.oneOf(CustomFieldResources, "member").schema.pipe(Schema.annotateKey({ messageMissingKey: "The {field} field is required." })),
  key: F.patterned(64, FIELD_KEY, "a letter, then lower-case letters, digits and underscores", "founded").schema.pipe(Schema.annotateKey({ messageMissingKey: "The {field} field is required." })),
  label: F.filledText(255, "Founded").schema.pipe(Schema.annotateKey({ messageMissingKey: "The {field} field is required." })),
  api_visible: Schema.optionalKey(Schema.NullOr(F.boolean(true).schema))
})
export const MemberRecord = Schema.Struct({ ...MemberCreate.fields, custom_fields: CustomFields })
/** A name a contact must have, which may be empty: POST /subscribers makes contacts without names. */
const ContactName = (example: string) => F.text(255, example).schema.pipe(Schema.annotateKey({ messageMissingKey: "The {field} field is required." }))
/** A contact as the import takes it: with its member, whether it is subscribed (false unless given), and names that may be empty. */
export const ContactRecord = Schema.Struct({
  ...ContactCreate.fields,
  first_name: ContactName("Ann"),
  last_name: ContactName("Lee"),
  custom_fields: CustomFields,
  member_id: OptionalId,
  subscribed: Schema.optionalKey(Schema.NullOr(F.boolean(true).schema))
})
/** An event's status as the import takes it: `cancelled` and `completed` too. */
export const ImportedEventStatus = Schema.Struct({ status: Schema.optionalKey(Schema.NullOr(F.oneOf(EventStatuses, "completed").schema)) })
/** The slug an event or a deal keeps (the API makes it from the title at creation and keeps it when the title changes). */
export const ImportedSlug = Schema.Struct({ slug: Schema.optionalKey(Schema.NullOr(F.text(255, "annual-gala").schema)) })
export const RegistrationRecord = Schema.Struct({ ...RegistrationCreate.fields, event_id: RequiredId })
/** The state an imported invoice is brought to. */
export const ImportedInvoiceStatus = Schema.Struct({
  status: Schema.optionalKey(Schema.NullOr(F.oneOf(["draft", "open", "void", "uncollectible"], "open").schema))
})
/** The number an issued invoice keeps, when no other invoice of the chamber has it. */
export const ImportedInvoiceNumber = Schema.Struct({ number: Schema.optionalKey(Schema.NullOr(F.filledText(255, "INV-000042").schema)) })
export const PaymentRecord = Schema.Struct({
  ...PaymentCreate.fields,
  invoice_id: RequiredId,
  gateway: Schema.optionalKey(Schema.NullOr(F.filledText(255, "stripe").schema))
})

/** The schemas a record of each collection is checked with: together, every field it may hold. */
const RecordSchemas: Readonly<Record<Collection, ReadonlyArray<Schema.Top>>> = {
  fields: [FieldRecord],
  members: [MemberRecord],
  contacts: [ContactRecord],
  events: [EventCreate, ImportedEventStatus, ImportedSlug],
  registrations: [RegistrationRecord],
  deals: [DealCreate, ImportedSlug],
  invoices: [InvoiceCreate, ImportedInvoiceStatus, ImportedInvoiceNumber],
  payments: [PaymentRecord],
  sponsorships: [SponsorshipCreate],
  placements: [PlacementCreate],
  bookings: [BookingCreate]
}

/** The `<thing>_ref` fields a record of each collection may carry, and the collection each points into. */
export const ImportRefs: Readonly<Record<Collection, Readonly<Record<string, Collection>>>> = {
  fields: {},
  members: {},
  contacts: { member_ref: "members" },
  events: {},
  registrations: { event_ref: "events", member_ref: "members", contact_ref: "contacts" },
  deals: { member_ref: "members" },
  invoices: { member_ref: "members" },
  payments: { invoice_ref: "invoices" },
  sponsorships: { member_ref: "members", event_ref: "events", invoice_ref: "invoices" },
  placements: { member_ref: "members", invoice_ref: "invoices" },
  bookings: { member_ref: "members", contact_ref: "contacts" }
}

/**
 * A field's value as JSON has it: `text` a string (dates, times and money are strings too),
 * `number`, `boolean`, and `json` a list or an object.
 */
export type ImportFieldType = "text" | "number" | "boolean" | "json"

type JsonSchema = {
  readonly type?: string
  readonly anyOf?: ReadonlyArray<JsonSchema>
  readonly $ref?: string
  readonly properties?: Readonly<Record<string, JsonSchema>>
}

const TYPES: Readonly<Record<string, ImportFieldType>> = { string: "text", integer: "number", number: "number", boolean: "boolean", array: "json", object: "json" }

/** The type a value of `schema` is sent as (a nullable field as its value), after `$ref`s. */
const typeOf = (schema: JsonSchema, resolve: (s: JsonSchema) => JsonSchema): ImportFieldType => {
  const s = resolve(schema)
  const kinds = (s.anyOf ?? [s]).map(resolve).map((k) => k.type).filter((t) => t !== "null")
  const types = new Set(kinds.map((t) => (t === undefined ? "json" : TYPES[t] ?? "json")))
  return types.size === 1 ? [...types][0]! : "json"
}

const fieldsOf = (schema: Schema.Top): ReadonlyArray<readonly [string, ImportFieldType]> => {
  const document = Schema.toJsonSchemaDocument(schema)
  const definitions = document.definitions as Readonly<Record<string, JsonSchema>>
  const resolve = (s: JsonSchema): JsonSchema => (s.$ref === undefined ? s : resolve(definitions[s.$ref.replace(/^#\/\$defs\//, "")] ?? {}))
  const root = resolve(document.schema as JsonSchema)
  return Object.entries(root.properties ?? {}).map(([field, s]) => [field, typeOf(s, resolve)] as const)
}

const cache = new Map<Collection, ReadonlyMap<string, ImportFieldType>>()

/**
 * Every field a record of `collection` may hold, with its type as the schemas that check it
 * say (they are made from the resources' field declarations): `ref` and the collection's refs
 * are text. A field of two types in two schemas is taken as JSON.
 */
export const importFields = (collection: Collection): ReadonlyMap<string, ImportFieldType> => {
  const known = cache.get(collection)
  if (known !== undefined) return known
  const fields = new Map<string, ImportFieldType>([["ref", "text"]])
  for (const schema of RecordSchemas[collection]) {
    for (const [field, type] of fieldsOf(schema)) fields.set(field, fields.has(field) && fields.get(field) !== type ? "json" : type)
  }
  for (const ref of Object.keys(ImportRefs[collection])) fields.set(ref, "text")
  cache.set(collection, fields)
  return fields
}
