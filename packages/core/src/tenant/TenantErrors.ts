/** Errors of chamber administration. */
import * as Schema from "effect/Schema"

export class TenantNotFound extends Schema.TaggedError<TenantNotFound>()("TenantNotFound", { ref: Schema.String }) {
  readonly kind = "NotFound" as const
  override get message() {
    return `No chamber ${this.ref}.`
  }
}
