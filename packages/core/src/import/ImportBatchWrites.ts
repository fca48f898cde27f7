/**
 * The collections an import writes set-wise (docs/architecture.md "Import"): members, contacts,
 * events, registrations, deals, sponsorships, placements and bookings, each batch one insert and
 * one append of its events, with what the service's create does for each record: the same
 * defaults, the same slugs, the same rows named checked to be the tenant's, the same events with
 * the same bodies in the same order (pg-adapter test import-batches.test.ts compares the two
 * paths' feeds). An event imported cancelled or completed is made published and then ended, as
 * `Events.end` ends it (event.created, then event.updated); an approved deal fires deal.created,
 * then deal.approved. A batch holding a record the service would refuse (an explicit slug
 * already taken, a row named that is not the tenant's, a rule of the record broken) or that the
 * database refuses fails with ImportBatchRefused; the importer then writes its records one by
 * one through the services. Invoices and payments are written one by one always (Importer.ts).
 */
import * as Effect from "effect/Effect"
import { BookingCreate, newBooking } from "../booking/Bookings.ts"
import { ContactResource } from "../contact/Contact.ts"
import { newDeal } from "../deal/Deals.ts"
import { endsAfterStart, newEvent } from "../event/Events.ts"
import { MemberResource, slugify } from "../member/Member.ts"
import { type AppendedEvent, type EventKind, Outbox } from "../outbox/Outbox.ts"
import { newPlacement, PlacementCreate } from "../placement/Placements.ts"
import { newRegistration } from "../registration/Registrations.ts"
import { decodeInput } from "../shared/Input.ts"
import { newSponsorship, SponsorshipCreate } from "../sponsorship/Sponsorships.ts"
import { ImportBatches, ImportBatchRefused, type OwnedTable } from "./ImportBatches.ts"
import { ContactRecord, MemberRecord, RegistrationRecord } from "./ImportRecords.ts"
import { type Collection, dealInput, eventInput, memberInput, slugless } from "./ImportSteps.ts"

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
  readonly events: (tenantId: number, written: ReadonlyArray<R>, records: ReadonlyArray<I>) => Effect.Effect<ReadonlyArray<AppendedEvent>, ImportBatchRefused>
}

/** The batch writers of one import into one tenant, over the storage port. */
export const importBatchWrites = Effect.gen(function*() {
  const batches = yield* ImportBatches
  const outbox = yield* Outbox

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
      const written = yield* spec.insert(tenantId, yield* spec.rows(tenantId, records))
      yield* outbox.appendAll(tenantId, yield* spec.events(tenantId, written, records))
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

    return {
      members,
      contacts: contacts(tenantId),
      events: events(tenantId),
      registrations: registrations(tenantId),
      deals: deals(tenantId),
      sponsorships: sponsorships(tenantId),
      placements: placements(tenantId),
      bookings: bookings(tenantId)
    }
  }
})
