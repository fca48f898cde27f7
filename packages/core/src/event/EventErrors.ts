/** What can go wrong with events, as domain facts. */
import * as Schema from "effect/Schema"
import { summarize } from "../resource/Issues.ts"

export class EventNotFound extends Schema.TaggedError<EventNotFound>()("EventNotFound", { id: Schema.Number }) {
  readonly kind = "NotFound" as const
  override get message() {
    return `No event ${this.id} in this chamber.`
  }
}

/** An event must end after it starts. */
export class EventEndsBeforeStart extends Schema.TaggedError<EventEndsBeforeStart>()("EventEndsBeforeStart", {}) {
  readonly kind = "Invalid" as const
  get errors() {
    return { ends_at: ["The ends at field must be a date-time after starts at."] }
  }
  override get message() {
    return summarize(this.errors)
  }
}
