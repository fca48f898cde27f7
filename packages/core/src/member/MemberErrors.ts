/** What can go wrong with members, as domain facts. */
import * as Schema from "effect/Schema"
import { summarize } from "../resource/Issues.ts"

export class MemberNotFound extends Schema.TaggedError<MemberNotFound>()("MemberNotFound", { id: Schema.Number }) {
  readonly kind = "NotFound" as const
  override get message() {
    return `No member ${this.id} in this chamber.`
  }
}

/** An explicit slug another member of the tenant has: a 422 on `slug` (docs/api.md "Members"). */
export class SlugTaken extends Schema.TaggedError<SlugTaken>()("SlugTaken", { slug: Schema.String }) {
  readonly kind = "Invalid" as const
  override get message() {
    return "The slug has already been taken."
  }
  get errors() {
    return { slug: [this.message] }
  }
}

/** Spec 4.1: a search needs an email or a name. */
export class SearchCriteriaMissing extends Schema.TaggedError<SearchCriteriaMissing>()("SearchCriteriaMissing", {}) {
  readonly kind = "Invalid" as const
  override get message() {
    return summarize(this.errors)
  }
  get errors() {
    return {
      email: ["The email field is required when name is not present."],
      name: ["The name field is required when email is not present."]
    }
  }
}
