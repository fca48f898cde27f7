/**
 * The collections an import writes set-wise (docs/architecture.md "Import"): every one but custom
 * field definitions, each batch one insert and one append of its events, with what the service
 * does for each record: the same defaults, the same slugs, the same rows named checked to be the
 * tenant's, the same events with the same bodies in the same order (pg-adapter test
 * import-batches.test.ts compares the two paths' feeds). An event imported cancelled or completed
 * is made published and then ended, as `Events.end` ends it (event.created, then event.updated);
 * an approved deal fires deal.created, then deal.approved. An invoice is inserted a draft, then
 * issued and ended by one update per step for the batch; a payment is applied to its invoice as
 * the payments before it left it, its invoice updated a round at a time; both through the rules
 * their services use (`newInvoice`, `numberFor`, `applyPayment`...). A batch holding a record the
 * service would refuse (an explicit slug already taken, a row named that is not the tenant's, a
 * rule of the record broken) or that the database refuses fails with ImportBatchRefused; the
 * importer then writes its records one by one through the services. */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { BookingCreate, newBooking } from "../booking/Bookings.ts"
import { ContactResource } from "../contact/Contact.ts"
import { newDeal } from "../deal/Deals.ts"
import { endsAfterStart, newEvent } from "../event/Events.ts"
import type { Invoice } from "../invoice/Invoice.ts"
import {
  type InvoiceNumbering,
  issuable,
  issuedChanges,
  issueEvents,
  newInvoice,
  numberFor,
  uncollectibleChanges,
  voidChanges
} from "../invoice/Invoices.ts"
import { MemberResource, slugify } from "../member/Member.ts"
import { type AppendedEvent, type EventKind, Outbox } from "../outbox/Outbox.ts"
import { apiPayment, applyPayment, gatewayPayment, type PaymentApplied, paymentEvents } from "../payment/Payments.ts"
import { newPlacement, PlacementCreate } from "../placement/Placements.ts"
import { newRegistration } from "../registration/Registrations.ts"
import { decodeInput } from "../shared/Input.ts"
import { newSponsorship, SponsorshipCreate } from "../sponsorship/Sponsorships.ts"
import { TenantRepo } from "../tenant/TenantRepo.ts"
import { ImportBatches, ImportBatchRefused, type InvoiceState, type OwnedTable, type PaymentRow } from "./ImportBatches.ts"
import { ContactRecord, MemberRecord, RegistrationRecord } from "./ImportRecords.ts"
import { type Collection, dealInput, eventInput, importedPayment, invoiceInput, memberInput, paymentInput, slugless } from "./ImportSteps.ts"

/** Writes the records of one batch (refs already replaced by ids); their ids, in order. */
export type BatchWrite = (inputs: ReadonlyArray<Readonly<Record<string, unknown>>>) => Effect.Effect<ReadonlyArray<number>, ImportBatchRefused>
export type BatchWrites = Partial<Record<Collection, BatchWrite>>

const refused = (reason: string) => Effect.fail(new ImportBatchRefused({ reason }))
const decoded = <A>(self: Effect.Effect<A, unknown>) => Effect.mapError(self, () => new ImportBatchRefused({ reason: "a record does not decode" }))

/** Each row its one `<kind>.created` event. */
const created = (type: EventKind) => (_: number, written: ReadonlyArray<unknown>) => Effect.succeed(written.map((data): AppendedEvent => ({ type, data })))

/** How one collection is written set-wise, as its service writes one record. */
interface BatchSpec<I, S, R extends { readonly id: number }> {
  /** A record as the service's create takes it (the schema it is checked with). */
  readonly decode: (input: Readonly<Record<string, unknown>>) => Effect.Effect<I, unknown>
  /** The rows a record names by id, each to be the tenant's (the service's `requireOwn`). */
  readonly names?: (record: I) => ReadonlyArray<readonly [OwnedTable, number | null | undefined]>
  /** The stored values of each record, as the service makes them; refused where the service would refuse. */
  readonly rows: (tenantId: number, records: ReadonlyArray<I>) => Effect.Effect<ReadonlyArray<S>, ImportBatchRefused>
  readonly insert: (tenantId: number, rows: ReadonlyArray<S>) => Effect.Effect<ReadonlyArray<R>, ImportBatchRefused>
  /** The events the creates fire, record after record, each record's in the order its service fires them. */
  readonly events: (tenantId: number, written: ReadonlyArray<R>, records: ReadonlyArray<I>, rows: ReadonlyArray<S>) => Effect.Effect<ReadonlyArray<AppendedEvent>, ImportBatchRefused>
}

/** The batch writers of one import into one tenant, over the storage port. */
export const importBatchWrites = Effect.gen(function*() {
  const batches = yield* ImportBatches
  const outbox = yield* Outbox
  const tenants = yield* TenantRepo

  const tenantOf = (tenantId: number) =>
    Effect.flatMap(tenants.find(tenantId), (t) => (t === undefined ? refused(`no tenant ${tenantId}`) : Effect.succeed(t)))

  /**
   * Invoices brought to `states` a round at a time, each round one update of invoices named once
   * in it (the first state of each, then the second...): each state as the update answered it.
   */
  const updateInRounds = (tenantId: number, states: ReadonlyArray<InvoiceState>) =>
    Effect.gen(function*() {
      const rounds: Array<Array<InvoiceState>> = []
      const seen = new Map<number, number>()
      const roundOf = states.map((state) => {
        const round = seen.get(state.id) ?? 0
        seen.set(state.id, round + 1)
        ;(rounds[round] ??= []).push(state)
        return round
      })
      const answered: Array<ReadonlyMap<number, Invoice>> = []
      for (const round of rounds) answered.push(new Map((yield* batches.updateInvoices(tenantId, round)).map((i) => [i.id, i])))
      return states.map((state, i) => answered[roundOf[i]!]!.get(state.id)!)
    })

  const batchOf = <I, S, R extends { readonly id: number }>(spec: BatchSpec<I, S, R>) => (tenantId: number): BatchWrite => (inputs) =>
    Effect.gen(function*() {
      const records: Array<I> = []
      for (const input of inputs) records.push(yield* decoded(spec.decode(input)))
      const named = new Map<OwnedTable, Set<number>>()
      for (const record of records) {
        for (const [table, id] of spec.names?.(record) ?? []) {
          if (id != null) named.set(table, (named.get(table) ?? new Set()).add(id))
        }
      }
      for (const [table, ids] of named) {
        if (!(yield* batches.allOwned(tenantId, table, [...ids]))) return yield* refused(`a record names a row of ${table} of no such id`)
      }
      const rows = yield* spec.rows(tenantId, records)
      const written = yield* spec.insert(tenantId, rows)
      yield* outbox.appendAll(tenantId, yield* spec.events(tenantId, written, records, rows))
      return written.map((row) => row.id)
    })

  /** `values` of each record, or refused when a record breaks `holds` (a rule its service's create checks). */
  const valuesOf = <I, S>(values: (record: I) => S, holds: (row: S) => boolean = () => true, reason = "") => (_: number, records: ReadonlyArray<I>) => {
    const rows = records.map(values)
    return rows.every(holds) ? Effect.succeed(rows) : refused(reason)
  }

  const contacts = batchOf({
    decode: (input) => decodeInput(ContactRecord, input),
    names: (c) => [["members", c.member_id]],
    rows: valuesOf((c) => ({ values: ContactResource.defaults(c), member_id: c.member_id ?? null, subscribed: c.subscribed === true })),
    insert: batches.insertContacts,
    events: created("contact.created")
  })

  const events = batchOf({
    decode: eventInput,
    rows: valuesOf(({ create, slug }) => newEvent(create, { slug }), endsAfterStart, "an event ends before it starts"),
    insert: batches.insertEvents,
    // Ended as Events.end ends one: after its creation, the change of status fires event.updated.
    events: (tenantId, written, records) =>
      Effect.gen(function*() {
        const ends = written.flatMap((e, i) => {
          const status = records[i]!.ended
          return status === undefined ? [] : [{ id: e.id, status }]
        })
        const ended = new Map((yield* batches.endEvents(tenantId, ends)).map((e) => [e.id, e]))
        return written.flatMap((e): ReadonlyArray<AppendedEvent> => {
          const end = ended.get(e.id)
          return end === undefined ? [{ type: "event.created", data: e }] : [{ type: "event.created", data: e }, { type: "event.updated", data: end }]
        })
      })
  })

  const registrations = batchOf({
    decode: (input) => decodeInput(RegistrationRecord, input),
    names: (r) => [["events", r.event_id], ["members", r.member_id], ["contacts", r.contact_id]],
    rows: (_, records) => {
      const now = new Date()
      return Effect.succeed(records.map(({ event_id, ...r }) => newRegistration(event_id, r, now)))
    },
    insert: batches.insertRegistrations,
    events: created("event.registration.created")
  })

  const deals = batchOf({
    decode: dealInput,
    names: ({ create }) => [["members", create.member_id]],
    // As Deals.create makes an imported deal: any end, its slug as it was.
    rows: valuesOf(({ create, slug }) => newDeal(create, { slug })),
    insert: batches.insertDeals,
    events: (_, written) =>
      Effect.succeed(written.flatMap((d): ReadonlyArray<AppendedEvent> =>
        d.attributes.status === "approved" ? [{ type: "deal.created", data: d }, { type: "deal.approved", data: d }] : [{ type: "deal.created", data: d }]
      ))
  })

  const sponsorships = batchOf({
    decode: (input) => decodeInput(SponsorshipCreate, input),
    names: (s) => [["members", s.member_id], ["events", s.event_id]],
    rows: valuesOf(newSponsorship),
    insert: batches.insertSponsorships,
    events: created("sponsorship.created")
  })

  const placements = batchOf({
    decode: (input) => decodeInput(PlacementCreate, input),
    names: (p) => [["members", p.member_id]],
    rows: valuesOf(newPlacement),
    insert: batches.insertPlacements,
    events: created("placement.created")
  })

  const invoices = batchOf({
    decode: invoiceInput,
    names: ({ create }) => [["members", create.member_id]],
    rows: (tenantId, records) =>
      Effect.gen(function*() {
        const tenant = yield* tenantOf(tenantId)
        const rows = []
        for (const { create } of records) {
          const draft = newInvoice(create, tenant.currency)
          if (Result.isFailure(draft)) return yield* refused(draft.failure.message)
          rows.push(draft.success)
        }
        return rows
      }),
    insert: batches.insertInvoices,
    // As the import step brings each to its state: made (invoice.created), issued with the number
    // Invoices.issue gives it, then voided or marked uncollectible, each step its events.
    events: (tenantId, written, records, rows) =>
      Effect.gen(function*() {
        const tenant = yield* tenantOf(tenantId)
        const issuing = records.some((r) => r.issued)
        let sequence = issuing ? yield* batches.invoiceSequence(tenantId) : undefined
        let moved = false
        const taken = new Set(yield* batches.invoiceNumbersTaken(tenantId, records.flatMap((r) => (r.issued && r.number !== undefined ? [r.number] : []))))
        const numbering: InvoiceNumbering = {
          taken: (number) => Effect.succeed(taken.has(number)),
          atLeast: (n) => Effect.sync(() => ((sequence = sequence === undefined ? n : Math.max(sequence, n)), (moved = true))),
          next: () => Effect.sync(() => ((sequence = (sequence ?? 0) + 1), (moved = true), sequence))
        }
        const now = new Date()
        const states: Array<InvoiceState> = []
        const steps: Array<Array<"issued" | "ended">> = []
        for (let i = 0; i < written.length; i++) {
          const record = records[i]!
          let state: InvoiceState = { ...rows[i]!.values, id: written[i]!.id }
          const made: Array<"issued" | "ended"> = []
          if (record.issued) {
            if (Result.isFailure(issuable(state))) return yield* refused("an invoice is no draft")
            const number = yield* numberFor(numbering, tenant.invoice_prefix, record.number)
            taken.add(number)
            state = { ...state, ...issuedChanges(state, number, now, tenant.net_terms) }
            states.push(state)
            made.push("issued")
          }
          if (record.ended !== undefined) {
            const ended: Result.Result<Partial<InvoiceState>, unknown> = record.ended === "void" ? voidChanges(state, now) : uncollectibleChanges(state)
            if (Result.isFailure(ended)) return yield* refused("an invoice cannot end as its status says")
            state = { ...state, ...ended.success }
            states.push(state)
            made.push("ended")
          }
          steps.push(made)
        }
        if (moved && sequence !== undefined) yield* batches.setInvoiceSequence(tenantId, sequence)
        const answered = yield* updateInRounds(tenantId, states)
        let n = 0
        return written.flatMap((invoice, i): ReadonlyArray<AppendedEvent> => [
          { type: "invoice.created", data: invoice },
          ...steps[i]!.flatMap((step) => {
            const after = answered[n++]!
            return step === "issued" ? issueEvents(after) : [{ type: "invoice.updated", data: after } as const]
          })
        ])
      })
  })

  const bookings = batchOf({
    decode: (input) => decodeInput(BookingCreate, input),
    names: (b) => [["members", b.member_id], ["contacts", b.contact_id], ["booking_types", b.booking_type_id]],
    // As Bookings.create: the type by id (the tenant's, checked above), else the type of that name, made when there is none.
    rows: (tenantId, records: ReadonlyArray<BookingCreate>) =>
      Effect.gen(function*() {
        const byName = records.flatMap((b) => (b.booking_type_id == null && b.booking_type_name != null ? [b.booking_type_name.trim()] : []))
        const named = yield* batches.bookingTypesNamed(tenantId, byName)
        const now = new Date()
        let n = 0
        const rows = []
        for (const b of records) {
          const type = b.booking_type_id ?? (b.booking_type_name != null ? named[n++] : undefined)
          if (type === undefined) return yield* refused("a booking names no booking type")
          rows.push(newBooking(b, type, now))
        }
        return rows
      }),
    insert: batches.insertBookings,
    events: created("booking.created")
  })

  return (tenantId: number): BatchWrites => {
    // The tenant's slugs, with those this import has given: read once, and again after a batch
    // failed (its records then went through Members.create, which picks slugs of its own).
    let slugs: Set<string> | undefined

    const members: BatchWrite = (inputs) =>
      Effect.gen(function*() {
        if (slugs === undefined) slugs = yield* batches.memberSlugs(tenantId)
        const taken = slugs
        const given = new Set<string>()
        const has = (slug: string) => taken.has(slug) || given.has(slug)
        const rows = []
        for (const input of inputs) {
          const values = MemberResource.defaults(yield* decoded(decodeInput(MemberRecord, memberInput(input))))
          // As Members.create: an explicit slug must be free, a generated one takes the next free
          // number; a member imported without one (`"slug": ""`) is made without one.
          if (slugless(input)) {
            rows.push({ ...values, slug: null })
            continue
          }
          let slug = values.slug
          if (slug !== null && has(slug)) return yield* refused(`the slug ${slug} is taken`)
          if (slug === null) {
            const base = slugify(values.name)
            slug = base
            for (let n = 2; has(slug); n++) slug = `${base}-${n}`
          }
          given.add(slug)
          rows.push({ ...values, slug })
        }
        const written = yield* batches.insertMembers(tenantId, rows)
        yield* outbox.appendAll(tenantId, written.map((data) => ({ type: "member.created", data })))
        for (const slug of given) taken.add(slug)
        return written.map((m) => m.id)
      }).pipe(Effect.tapError(() => Effect.sync(() => (slugs = undefined))))

    // As Payments records each, against the balance its invoice has after the payments before it.
    const payments: BatchWrite = (inputs) =>
      Effect.gen(function*() {
        const records: Array<{ readonly invoice_id: number; readonly payment: PaymentApplied }> = []
        for (const input of inputs) {
          const p = yield* decoded(paymentInput(input))
          records.push({ invoice_id: p.invoice_id, payment: p.gateway === undefined ? apiPayment(p.record) : yield* decoded(gatewayPayment(p.gateway)) })
        }
        const current = new Map((yield* batches.lockInvoices(tenantId, records.map((r) => r.invoice_id))).map((i) => [i.id, i]))
        const rows: Array<PaymentRow> = []
        const states: Array<InvoiceState> = []
        const paid: Array<boolean> = []
        for (const { invoice_id, payment } of records) {
          const invoice = current.get(invoice_id)
          const applied = applyPayment(invoice_id, invoice, payment, importedPayment)
          if (Result.isFailure(applied)) return yield* refused(applied.failure.message)
          const state = { ...invoice!, ...applied.success.changes }
          current.set(invoice_id, state)
          rows.push({ invoice_id, values: applied.success.values })
          states.push(state)
          paid.push(applied.success.paid)
        }
        const written = yield* batches.insertPayments(tenantId, rows)
        const invoices = yield* updateInRounds(tenantId, states)
        yield* outbox.appendAll(tenantId, written.flatMap((payment, i) => paymentEvents(payment, invoices[i]!, paid[i]!)))
        return written.map((p) => p.id)
      })

    return {
      members,
      contacts: contacts(tenantId),
      events: events(tenantId),
      registrations: registrations(tenantId),
      deals: deals(tenantId),
      invoices: invoices(tenantId),
      payments,
      sponsorships: sponsorships(tenantId),
      placements: placements(tenantId),
      bookings: bookings(tenantId)
    }
  }
})
