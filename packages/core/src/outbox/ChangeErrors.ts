/** What can go wrong reading the change feed (ruling 29), as domain facts. */
import * as Schema from "effect/Schema"

/** `types` names a kind no event has: a 422 on `types`. */
export class UnknownEventKind extends Schema.TaggedError<UnknownEventKind>()("UnknownEventKind", { kinds: Schema.Array(Schema.String) }) {
  readonly kind = "Invalid" as const
  override get message() {
    return `The types field names unknown event kinds: ${this.kinds.join(", ")}.`
  }
  get errors() {
    return { types: [this.message] }
  }
}

/** `after` is neither `head` nor a cursor this API gave: a 422 on `after`. */
export class MalformedCursor extends Schema.TaggedError<MalformedCursor>()("MalformedCursor", {}) {
  readonly kind = "Invalid" as const
  override get message() {
    return "The after field must be head or a next_cursor from an earlier answer."
  }
  get errors() {
    return { after: [this.message] }
  }
}

/**
 * `after` is well formed but past the newest position the chamber's feed has given out (a cursor
 * of another database, or saved before a restore): a 422 on `after`, never an empty page that
 * would skip what comes later.
 */
export class CursorAhead extends Schema.TaggedError<CursorAhead>()("CursorAhead", {}) {
  readonly kind = "Invalid" as const
  override get message() {
    return "The after field is past the newest event of this chamber's feed; start again with after=head."
  }
  get errors() {
    return { after: [this.message] }
  }
}

/** The cursor points before events that were pruned: the reader may have missed some (a 410). */
export class CursorExpired extends Schema.TaggedError<CursorExpired>()("CursorExpired", {}) {
  readonly kind = "Gone" as const
  override get message() {
    return "This cursor is older than the events kept; resync from the lists, then start again with after=head."
  }
}

/** The key may read none of the kinds asked (or none at all): a 403 naming the scope. */
export class ChangeScopeMissing extends Schema.TaggedError<ChangeScopeMissing>()("ChangeScopeMissing", { scope: Schema.String }) {
  readonly kind = "Forbidden" as const
  override get message() {
    return `This key lacks the ${this.scope} scope.`
  }
}
