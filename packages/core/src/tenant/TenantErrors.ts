/** Errors of chamber administration. */
import { Schema } from "effect"

export class TenantNotFound extends Schema.TaggedError<TenantNotFound>()("TenantNotFound", { ref: Schema.String }) {
  readonly kind = "NotFound" as const
  override get message() {
    return `No chamber ${this.ref}.`
  }
}
