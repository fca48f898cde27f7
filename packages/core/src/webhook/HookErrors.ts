/** What can go wrong with webhook subscriptions, as domain facts. */
import * as Schema from "effect/Schema"

export class HookNotFound extends Schema.TaggedError<HookNotFound>()("HookNotFound", { id: Schema.Number }) {
  readonly kind = "NotFound" as const
  override get message() {
    return `No webhook subscription ${this.id} in this chamber.`
  }
}
