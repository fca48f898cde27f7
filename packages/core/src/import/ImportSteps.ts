/**
 * How each collection of an import is checked and written (docs/cli.md "Import"), in the order
 * the collections may point at each other: each record is decoded with the schema its API
 * payload or core operation uses, checked against the rules that need no database, and written
 * through that operation, events and all.
 */
import * as Effect from "effect/Effect"
import type * as Schema from "effect/Schema"
import { decodeInput } from "../shared/Input.ts"
import { Contacts } from "../contact/Contacts.ts"
import { DealCreate } from "../deal/Deal.ts"
import { Deals } from "../deal/Deals.ts"
import { EventCreate } from "../event/Event.ts"
import { EventEndsBeforeStart } from "../event/EventErrors.ts"
import { endsAfterStart, Events } from "../event/Events.ts"
import { InvoiceCreate } from "../invoice/Invoice.ts"
import { Invoices } from "../invoice/Invoices.ts"
import { Members } from "../member/Members.ts"
import { Payments } from "../payment/Payments.ts"
import { Registrations } from "../registration/Registrations.ts"
import { SponsorshipCreate, Sponsorships } from "../sponsorship/Sponsorships.ts"
import { PlacementCreate, Placements } from "../placement/Placements.ts"
import { BookingCreate, Bookings } from "../booking/Bookings.ts"
import { InvalidInput } from "../shared/Errors.ts"
import { Tenants } from "../tenant/Tenants.ts"
import {
  ContactRecord,
  FieldRecord,
  ImportedEventStatus,
  ImportedInvoiceNumber,
  ImportRefs,
  ImportedInvoiceStatus,
  ImportedSlug,
  MemberRecord,
  PaymentRecord,
  RegistrationRecord
} from "./ImportRecords.ts"

export const ImportCollections = [
  "fields",
  "members",
  "contacts",
  "events",
  "registrations",
  "deals",
  "invoices",
  "payments",
  "sponsorships",
  "placements",
  "bookings"
] as const
export type Collection = (typeof ImportCollections)[number]

export interface ImportStep {
  readonly collection: Collection
  /** The `<thing>_ref` fields a record may carry, and the collection each points into. */
  readonly refs: Readonly<Record<string, Collection>>
  /**
   * Checks one record (refs replaced by stand-in ids) as `write` would, short of the rules that
   * need the database (a slug already taken, an invoice's balance). Errors as `write`'s.
   */
  readonly check: (input: Readonly<Record<string, unknown>>) => Effect.Effect<void, unknown>
  /** Writes one record (refs already replaced by ids); its id. Errors carry their own message and, when a field is at fault, `errors`. */
  readonly write: (tenantId: number, input: Readonly<Record<string, unknown>>) => Effect.Effect<number, unknown>
}

/** Input checked as `schema` says, as a function of the input. */
const decoder = <S extends Schema.ConstraintDecoder<unknown>>(schema: S) => (input: unknown) => decodeInput(schema, input)

const FieldImport = decoder(FieldRecord)
const MemberImport = decoder(MemberRecord)
const ContactImport = decoder(ContactRecord)
const EventImport = decoder(EventCreate)
const RegistrationImport = decoder(RegistrationRecord)
const DealImport = decoder(DealCreate)
const InvoiceStatusImport = decoder(ImportedInvoiceStatus)
const InvoiceImport = decoder(InvoiceCreate)
const InvoiceNumberImport = decoder(ImportedInvoiceNumber)
const PaymentImport = decoder(PaymentRecord)
const decodeEnded = decoder(ImportedEventStatus)
const SlugImport = decoder(ImportedSlug)
const SponsorshipImport = decoder(SponsorshipCreate)
const PlacementImport = decoder(PlacementCreate)
const BookingImport = decoder(BookingCreate)

/** An event's input as it is created: a cancelled or completed one is made published, then ended. */
export const eventInput = Effect.fnUntraced(function*(input: Readonly<Record<string, unknown>>) {
  const { status } = yield* decodeEnded(input)
  const ended = status === "cancelled" || status === "completed" ? status : undefined
  const { slug } = yield* SlugImport(input)
  return { ended, slug, create: yield* EventImport(ended === undefined ? input : { ...input, status: "published" }) }
})

/** A deal's input as it is created, with the slug it had (made from its title unless given). */
export const dealInput = Effect.fnUntraced(function*(input: Readonly<Record<string, unknown>>) {
  const { slug } = yield* SlugImport(input)
  return { slug, create: yield* DealImport(input) }
})

/**
 * An invoice's input as it is created, with the state it is brought to: a draft, then issued
 * (open), voided, or issued and marked uncollectible, as `status` says; one given a `number` is
 * issued with it (when no invoice of the chamber has it) before it is voided.
 */
export const invoiceInput = Effect.fnUntraced(function*(input: Readonly<Record<string, unknown>>) {
  const { status } = yield* InvoiceStatusImport(input)
  const { number } = yield* InvoiceNumberImport(input)
  const create = yield* InvoiceImport(input)
  const issued = status === "open" || status === "uncollectible" || (status === "void" && number != null)
  const ended = status === "void" || status === "uncollectible" ? status : undefined
  return { create, issued, number: number ?? undefined, ended }
})

/** A payment's input: its invoice, and the payment as the API records it or, with a `gateway`, as a gateway's. */
export const paymentInput = Effect.fnUntraced(function*(input: Readonly<Record<string, unknown>>) {
  const { invoice_id, gateway, amount, ...payment } = yield* PaymentImport(input)
  return gateway == null
    ? { invoice_id, record: { ...payment, amount } }
    : { invoice_id, gateway: { ...payment, amount_cents: amount, gateway } }
})

/** A void or uncollectible invoice takes the payments made before it ended (Payments' `beforeEnded`). */
export const importedPayment = { beforeEnded: true } as const

/**
 * A member without a slug (its slug taken away through the API) is written `slug: ""`, which no
 * slug of the API can be: made without one, none generated. Its other fields are checked as any member's.
 */
export const slugless = (input: Readonly<Record<string, unknown>>) => input.slug === ""
export const memberInput = (input: Readonly<Record<string, unknown>>) => {
  if (!slugless(input)) return input
  const { slug: _, ...rest } = input
  return rest
}

/** A booking names its type by id or by name (Bookings.create finds or makes the type). */
const bookingTypeGiven = (b: BookingCreate) =>
  b.booking_type_id != null || b.booking_type_name != null
    ? Effect.void
    : Effect.fail(InvalidInput.field("booking_type_id", "The booking type id field is required when booking type name is not present."))

/** Nothing when `holds`, else `broken`. */
const rule = <E>(holds: boolean, broken: () => E): Effect.Effect<void, E> => (holds ? Effect.void : Effect.fail(broken()))

const checks = {
  fields: (input) => FieldImport(input),
  members: (input) => MemberImport(memberInput(input)),
  contacts: (input) => ContactImport(input),
  events: (input) =>
    Effect.flatMap(eventInput(input), ({ create }) =>
      rule(endsAfterStart({ starts_at: create.starts_at, ends_at: create.ends_at ?? null }), () => new EventEndsBeforeStart())),
  registrations: (input) => RegistrationImport(input),
  // A deal may have ended: the import brings history, and the API's rule (an end after today) is for new deals.
  deals: (input) => Effect.andThen(SlugImport(input), DealImport(input)),
  invoices: (input) => Effect.andThen(Effect.andThen(InvoiceStatusImport(input), InvoiceNumberImport(input)), InvoiceImport(input)),
  payments: (input) => PaymentImport(input),
  sponsorships: (input) => SponsorshipImport(input),
  placements: (input) => PlacementImport(input),
  bookings: (input) => Effect.flatMap(BookingImport(input), bookingTypeGiven)
} satisfies Record<Collection, (input: Readonly<Record<string, unknown>>) => Effect.Effect<unknown, unknown>>

const idOf = <E, R>(self: Effect.Effect<{ readonly id: number }, E, R>) => Effect.map(self, (row) => row.id)

/** The steps, over the core services of the running application. */
export const importSteps = Effect.gen(function*() {
  const tenants = yield* Tenants
  const members = yield* Members
  const contacts = yield* Contacts
  const events = yield* Events
  const registrations = yield* Registrations
  const deals = yield* Deals
  const invoices = yield* Invoices
  const payments = yield* Payments
  const sponsorships = yield* Sponsorships
  const placements = yield* Placements
  const bookings = yield* Bookings

  const written: ReadonlyArray<Omit<ImportStep, "check">> = [
    {
      collection: "fields",
      refs: ImportRefs.fields,
      write: (t, input) => Effect.flatMap(FieldImport(input), (f) => idOf(tenants.addField(t, { ...f, api_visible: f.api_visible === true })))
    },
    {
      collection: "members",
      refs: ImportRefs.members,
      write: (t, input) => Effect.flatMap(MemberImport(memberInput(input)), (m) => idOf(members.create(t, m, { withoutSlug: slugless(input) })))
    },
    {
      collection: "contacts",
      refs: ImportRefs.contacts,
      write: (t, input) => Effect.flatMap(ContactImport(input), (c) => idOf(contacts.create(t, c)))
    },
    {
      collection: "events",
      refs: ImportRefs.events,
      write: (t, input) =>
        Effect.gen(function*() {
          // cancelled and completed are the service's to set: the event is made, then ended.
          const { ended, slug, create } = yield* eventInput(input)
          const event = yield* events.create(t, create, { slug })
          return ended === undefined ? event.id : (yield* events.end(t, event.id, ended)).id
        })
    },
    {
      collection: "registrations",
      refs: ImportRefs.registrations,
      write: (t, input) => Effect.flatMap(RegistrationImport(input), ({ event_id, ...r }) => idOf(registrations.create(t, event_id, r)))
    },
    {
      collection: "deals",
      refs: ImportRefs.deals,
      write: (t, input) => Effect.flatMap(dealInput(input), ({ slug, create }) => idOf(deals.create(t, create, { slug })))
    },
    {
      collection: "invoices",
      refs: ImportRefs.invoices,
      write: (t, input) =>
        Effect.gen(function*() {
          const { create, issued, number, ended } = yield* invoiceInput(input)
          const invoice = yield* invoices.create(t, create)
          if (issued) yield* invoices.issue(t, invoice.id, number)
          if (ended === "uncollectible") yield* invoices.markUncollectible(t, invoice.id)
          if (ended === "void") yield* invoices.void(t, invoice.id)
          return invoice.id
        })
    },
    {
      collection: "payments",
      refs: ImportRefs.payments,
      write: (t, input) =>
        Effect.gen(function*() {
          const payment = yield* paymentInput(input)
          const recorded = payment.gateway === undefined
            ? yield* payments.record(t, payment.invoice_id, payment.record, importedPayment)
            : yield* payments.recordGateway(t, payment.invoice_id, payment.gateway, importedPayment)
          return recorded.id
        })
    },
    // These operations check their own input (internal fields included) against their schemas.
    {
      collection: "sponsorships",
      refs: ImportRefs.sponsorships,
      write: (t, input) => idOf(sponsorships.create(t, input as SponsorshipCreate))
    },
    {
      collection: "placements",
      refs: ImportRefs.placements,
      write: (t, input) => idOf(placements.create(t, input as PlacementCreate))
    },
    {
      collection: "bookings",
      refs: ImportRefs.bookings,
      write: (t, input) => idOf(bookings.create(t, input as BookingCreate))
    }
  ]
  return written.map((step): ImportStep => {
    const check: (input: Readonly<Record<string, unknown>>) => Effect.Effect<unknown, unknown> = checks[step.collection]
    return { ...step, check: (input) => Effect.asVoid(check(input)) }
  })
})
