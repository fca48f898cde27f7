/**
 * The change feed (ruling 29, docs/api.md "Change feed"): a chamber's events in commit order,
 * 100 at a time, each exactly as a delivery carries it, after an opaque cursor. The HTTP API
 * serves it to a key (only the kinds its scopes may read); embedders call it directly.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { Scope } from "../Scopes.ts"
import { ChangeScopeMissing, CursorAhead, CursorExpired, MalformedCursor, UnknownEventKind } from "./ChangeErrors.ts"
import { ChangeLog, type LoggedEvent } from "./ChangeLog.ts"
import { decodeCursor, encodeCursor } from "./Cursor.ts"
import { type EventKind, EventKinds } from "./Outbox.ts"

/** Events in one answer at most. */
export const CHANGES_PAGE = 100

/** Events one prune statement deletes at most, so it never holds long locks. */
export const CHANGES_PRUNE_BATCH = 1_000

/** The scope that reads each kind: its resource's read scope. */
export const KIND_SCOPES: Readonly<Record<EventKind, Scope>> = {
  "member.created": "members:read",
  "member.updated": "members:read",
  "contact.created": "contacts:read",
  "invoice.issued": "invoices:read",
  "invoice.paid": "invoices:read",
  "event.registration.created": "registrations:read",
  "deal.approved": "deals:read",
  "contact.updated": "contacts:read",
  "event.created": "events:read",
  "event.updated": "events:read",
  "invoice.created": "invoices:read",
  "invoice.updated": "invoices:read",
  "payment.created": "payments:read",
  "deal.created": "deals:read",
  "deal.updated": "deals:read",
  "sponsorship.created": "sponsorships:read",
  "placement.created": "placements:read",
  "booking.created": "bookings:read"
}

/** One event exactly as a delivery's body (ruling 20). */
export interface ChangeEvent {
  readonly id: string
  readonly type: EventKind
  readonly created_at: string
  readonly data: unknown
}

export interface ChangesPage {
  readonly data: ReadonlyArray<ChangeEvent>
  readonly meta: { readonly next_cursor: string; readonly has_more: boolean }
}

export interface ChangesQuery {
  /** `head`, or a `next_cursor` of an earlier answer; without it, from the oldest event kept. */
  readonly after?: string | undefined
  /** Comma-separated kinds; without it, every kind that may be read. */
  readonly types?: string | undefined
}

export type ChangesError = ChangeScopeMissing | UnknownEventKind | MalformedCursor | CursorAhead | CursorExpired

const isKind = (name: string): name is EventKind => (EventKinds as ReadonlyArray<string>).includes(name)

/** An event's body as JSON text: `data` spliced in as stored (jsonb's text form), never parsed. */
const eventJson = (e: LoggedEvent) =>
  `{"id":${JSON.stringify(e.id)},"type":${JSON.stringify(e.type)},"created_at":${JSON.stringify(e.created_at)},"data":${e.dataJson}}`

export class Changes extends Context.Service<Changes, {
  /**
   * The page after `query.after`. `scopes`: the reader's (an API key's); only kinds they read are
   * answered. Embedders that read everything leave it out.
   */
  readonly read: (tenantId: number, query: ChangesQuery, scopes?: ReadonlyArray<string>) => Effect.Effect<ChangesPage, ChangesError>
  /** The same page as the JSON text of `{data, meta}` (what GET /api/v1/changes writes), its events never parsed. */
  readonly readJson: (tenantId: number, query: ChangesQuery, scopes?: ReadonlyArray<string>) => Effect.Effect<string, ChangesError>
  /** Deletes every event created before `before` (in batches), except those a pending delivery still needs; answers how many. */
  readonly prune: (before: Date) => Effect.Effect<number>
}>()("chamber/Changes") {
  static readonly layer = Layer.effect(Changes, Effect.gen(function*() {
    const log = yield* ChangeLog

    /** The kinds asked, each checked: known (422), then readable (403 naming its scope). */
    const kindsOf = Effect.fnUntraced(function*(types: string | undefined, readable: ReadonlyArray<EventKind>) {
      const named = [...new Set((types ?? "").split(",").map((t) => t.trim()).filter((t) => t !== ""))]
      if (named.length === 0) return readable
      const unknown = named.filter((t) => !isKind(t))
      if (unknown.length > 0) return yield* new UnknownEventKind({ kinds: unknown })
      const kinds = named as Array<EventKind>
      const unreadable = kinds.find((k) => !readable.includes(k))
      if (unreadable !== undefined) return yield* new ChangeScopeMissing({ scope: KIND_SCOPES[unreadable] })
      return kinds
    })

    const pageOf = Effect.fnUntraced(function*(tenantId: number, query: ChangesQuery, scopes: ReadonlyArray<string> | undefined) {
      const readable = EventKinds.filter((k) => scopes === undefined || scopes.includes(KIND_SCOPES[k]))
      if (readable.length === 0) return yield* new ChangeScopeMissing({ scope: "members:read" })
      const kinds = yield* kindsOf(query.types, readable)
      if (query.after === "head") {
        return { events: [] as ReadonlyArray<LoggedEvent>, meta: { next_cursor: encodeCursor(yield* log.head(tenantId)), has_more: false } }
      }
      const cursor = query.after === undefined ? undefined : decodeCursor(query.after)
      if (query.after !== undefined && cursor === undefined) return yield* new MalformedCursor()
      // From the oldest kept: just past what was pruned.
      const after = cursor ?? (yield* log.prunedThrough(tenantId))
      const rows = yield* log.after(tenantId, after, kinds, CHANGES_PAGE + 1)
      // Read after the events: a prune that removed any of those past the cursor is seen here.
      if (cursor !== undefined && cursor < (yield* log.prunedThrough(tenantId))) return yield* new CursorExpired()
      // A cursor past the head (only possible when nothing follows it): a position this feed never gave.
      if (cursor !== undefined && rows.length === 0 && cursor > (yield* log.head(tenantId))) return yield* new CursorAhead()
      const data = rows.slice(0, CHANGES_PAGE)
      const last = data.at(-1)?.position ?? after
      return { events: data, meta: { next_cursor: encodeCursor(last), has_more: rows.length > CHANGES_PAGE } }
    })

    const read = Effect.fn("Changes.read")(function*(tenantId: number, query: ChangesQuery, scopes?: ReadonlyArray<string>) {
      const { events, meta } = yield* pageOf(tenantId, query, scopes)
      return { data: events.map((e) => JSON.parse(eventJson(e)) as ChangeEvent), meta }
    })

    const readJson = Effect.fn("Changes.readJson")(function*(tenantId: number, query: ChangesQuery, scopes?: ReadonlyArray<string>) {
      const { events, meta } = yield* pageOf(tenantId, query, scopes)
      return `{"data":[${events.map(eventJson).join(",")}],"meta":${JSON.stringify(meta)}}`
    })

    const prune = Effect.fn("Changes.prune")(function*(before: Date) {
      let total = 0
      for (;;) {
        const deleted = yield* log.prune(before, CHANGES_PRUNE_BATCH)
        total += deleted
        if (deleted < CHANGES_PRUNE_BATCH) return total
      }
    })

    return Changes.of({ read, readJson, prune })
  }))
}
