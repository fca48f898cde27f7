/** Errors of chamber administration. */
import * as Schema from "effect/Schema"

export class TenantNotFound extends Schema.TaggedError<TenantNotFound>()("TenantNotFound", {
  ref: Schema.String,
  /** It exists but its removal has begun: only `chamber tenant delete` may go on with it. */
  beingDeleted: Schema.optionalKey(Schema.Boolean)
}) {
  readonly kind = "NotFound" as const
  override get message() {
    return this.beingDeleted === true
      ? `Chamber ${this.ref} is being deleted: run chamber tenant delete again to finish.`
      : `No chamber ${this.ref}.`
  }
}

/** `chamber tenant delete` was not given the chamber's name exactly: nothing is removed. */
export class ChamberNameNotConfirmed extends Schema.TaggedError<ChamberNameNotConfirmed>()("ChamberNameNotConfirmed", {
  ref: Schema.String,
  name: Schema.String
}) {
  override get message() {
    return `--confirm must be the chamber's name exactly, ${JSON.stringify(this.name)}: nothing was deleted.`
  }
}

/** Rows of a chamber kept appearing while it was removed (a writer still at work): running it again finishes. */
export class TenantRemovalUnfinished extends Schema.TaggedError<TenantRemovalUnfinished>()("TenantRemovalUnfinished", {
  ref: Schema.String,
  left: Schema.Record(Schema.String, Schema.Number)
}) {
  override get message() {
    const tables = Object.entries(this.left).map(([table, rows]) => `${rows} in ${table}`).join(", ")
    return `Rows of chamber ${this.ref} kept appearing while it was deleted (${tables}): run chamber tenant delete again to finish.`
  }
}
