/** What stops an import (docs/cli.md "Import"): nothing is written when one of these is raised. */
import * as Schema from "effect/Schema"

/** One record breaks a rule: its collection, its index in that collection and the field at fault. */
export class ImportRecordInvalid extends Schema.TaggedError<ImportRecordInvalid>()("ImportRecordInvalid", {
  collection: Schema.String,
  index: Schema.Number,
  /** The field as the file names it (`member_ref`, `lines.0.unit`); null when the rule is the record's as a whole. */
  field: Schema.NullOr(Schema.String),
  reason: Schema.String
}) {
  readonly kind = "Invalid" as const
  get errors() {
    return { [this.field === null ? `${this.collection}.${this.index}` : `${this.collection}.${this.index}.${this.field}`]: [this.reason] }
  }
  override get message() {
    return `${this.collection}[${this.index}]${this.field === null ? "" : `.${this.field}`}: ${this.reason}`
  }
}

/** The document itself is not an import: not an object, an unknown collection, a collection that is not a list. */
export class ImportDocumentInvalid extends Schema.TaggedError<ImportDocumentInvalid>()("ImportDocumentInvalid", { reason: Schema.String }) {
  readonly kind = "Invalid" as const
  get errors() {
    return { document: [this.reason] }
  }
  override get message() {
    return this.reason
  }
}
