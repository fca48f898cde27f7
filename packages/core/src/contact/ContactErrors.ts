/** What can go wrong with contacts, as domain facts. */
import * as Schema from "effect/Schema"

export class ContactNotFound extends Schema.TaggedError<ContactNotFound>()("ContactNotFound", { id: Schema.Number }) {
  readonly kind = "NotFound" as const
  override get message() {
    return `No contact ${this.id} in this chamber.`
  }
}
