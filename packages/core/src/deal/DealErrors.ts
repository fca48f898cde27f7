/** What can go wrong with deals, as domain facts. */
import * as Schema from "effect/Schema"
import { summarize } from "../resource/Issues.ts"

export class DealNotFound extends Schema.TaggedError<DealNotFound>()("DealNotFound", { id: Schema.Number }) {
  readonly kind = "NotFound" as const
  override get message() {
    return `No deal ${this.id} in this chamber.`
  }
}

/** A deal must end after today (UTC). */
export class DealEndsTooSoon extends Schema.TaggedError<DealEndsTooSoon>()("DealEndsTooSoon", {}) {
  readonly kind = "Invalid" as const
  get errors() {
    return { ends_at: ["The ends at field must be a date after today."] }
  }
  override get message() {
    return summarize(this.errors)
  }
}
