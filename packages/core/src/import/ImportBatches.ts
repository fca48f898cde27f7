/**
 * Storage port for an import's set-wise writes (docs/architecture.md "Import"): many rows of one
 * collection in one statement, each answered as its repository's insert answers one, in the
 * order given. Runs in the caller's transaction. A batch the database refuses (a slug taken
 * meanwhile, any constraint) fails with `ImportBatchRefused` and writes nothing of it once the
 * caller rolls back to its savepoint; the importer then writes those records one by one, so
 * each is refused with the service's own message.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { Booking, BookingStored } from "../booking/Bookings.ts"
import type { Contact, ContactAttributes } from "../contact/Contact.ts"
import type { Deal, DealStored } from "../deal/Deal.ts"
import type { Event, EventStored } from "../event/Event.ts"
import type { Invoice, InvoiceLineStored, InvoiceStored } from "../invoice/Invoice.ts"
import type { Member, MemberAttributes } from "../member/Member.ts"
import type { Payment, PaymentStored } from "../payment/Payment.ts"
import type { Placement, PlacementStored } from "../placement/Placements.ts"
import type { Registration, RegistrationStored } from "../registration/Registration.ts"
import type { Sponsorship, SponsorshipStored } from "../sponsorship/Sponsorships.ts"

export class ImportBatchRefused extends Schema.TaggedError<ImportBatchRefused>()("ImportBatchRefused", {
  reason: Schema.String
}) {
  override get message() {
    return `The database refused a batch of the import: ${this.reason}`
  }
}

export interface ContactRow {
  readonly values: ContactAttributes
  /** The member business the contact works for (ContactRepo.insert's `memberId`). */
  readonly member_id: number | null
  /** Subscribed to the newsletter from its creation (Contacts.create's `subscribed`, an import's). */
  readonly subscribed: boolean
}

/** A draft as InvoiceRepo.insert stores it: its values and its lines (it gets its own pay token). */
export interface InvoiceRow {
  readonly values: InvoiceStored
  readonly lines: ReadonlyArray<InvoiceLineStored>
}

/** An invoice's stored values, all of them, as they are to become. */
export type InvoiceState = InvoiceStored & { readonly id: number }

/** A payment as PaymentRepo.insert stores it. */
export interface PaymentRow {
  readonly invoice_id: number
  readonly values: PaymentStored
}

/** The tables whose rows a record may name by id; a row named must be the tenant's. */
export type OwnedTable = "members" | "contacts" | "events" | "booking_types"

/** An event ended as `Events.end` ends it. */
export interface EventEnd {
  readonly id: number
  readonly status: "cancelled" | "completed"
}

type Insert<Stored, Row> = (tenantId: number, rows: ReadonlyArray<Stored>) => Effect.Effect<ReadonlyArray<Row>, ImportBatchRefused>

export class ImportBatches extends Context.Service<ImportBatches, {
  /** Every slug the tenant's members hold. */
  readonly memberSlugs: (tenantId: number) => Effect.Effect<Set<string>>
  /** Whether every one of `ids` is a row of the tenant's in `table`. */
  readonly allOwned: (tenantId: number, table: OwnedTable, ids: ReadonlyArray<number>) => Effect.Effect<boolean>
  readonly insertMembers: Insert<MemberAttributes, Member>
  /** Contacts as Contacts.create makes them. */
  readonly insertContacts: Insert<ContactRow, Contact>
  readonly insertEvents: Insert<EventStored, Event>
  /** Each event given its final status, answered as EventRepo.update answers, in the order given. */
  readonly endEvents: (tenantId: number, ends: ReadonlyArray<EventEnd>) => Effect.Effect<ReadonlyArray<Event>, ImportBatchRefused>
  readonly insertRegistrations: Insert<RegistrationStored, Registration>
  readonly insertDeals: Insert<DealStored, Deal>
  readonly insertSponsorships: Insert<SponsorshipStored, Sponsorship>
  /** Sponsorship rows of kind `ad`, as PlacementRepo.insert stores them. */
  readonly insertPlacements: Insert<PlacementStored, Placement>
  readonly insertBookings: Insert<BookingStored, Booking>
  readonly insertInvoices: Insert<InvoiceRow, Invoice>
  /**
   * Each invoice (ids distinct) given the values of its state, answered as InvoiceRepo.update
   * answers, in the order given.
   */
  readonly updateInvoices: (tenantId: number, states: ReadonlyArray<InvoiceState>) => Effect.Effect<ReadonlyArray<Invoice>, ImportBatchRefused>
  /** The stored values of the tenant's invoices of `ids` (those it has), locked for an update in this transaction. */
  readonly lockInvoices: (tenantId: number, ids: ReadonlyArray<number>) => Effect.Effect<ReadonlyArray<InvoiceState>>
  /** Which of `numbers` an invoice of the tenant has. */
  readonly invoiceNumbersTaken: (tenantId: number, numbers: ReadonlyArray<string>) => Effect.Effect<ReadonlySet<string>>
  /** The last number of the tenant's invoice sequence, locked for this transaction; none when it has not begun. */
  readonly invoiceSequence: (tenantId: number) => Effect.Effect<number | undefined>
  /** The tenant's invoice sequence set to `last` (begun if need be), never moved back. */
  readonly setInvoiceSequence: (tenantId: number, last: number) => Effect.Effect<void>
  readonly insertPayments: Insert<PaymentRow, Payment>
  /** The id of the tenant's booking type of each name, made when there is none (BookingRepo.bookingTypeNamed), in order. */
  readonly bookingTypesNamed: (tenantId: number, names: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<number>>
}>()("chamber/ImportBatches") {}
