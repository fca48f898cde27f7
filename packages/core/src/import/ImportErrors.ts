/** What stops an import (docs/cli.md "Import"): nothing is written when one of these is raised. */
import * as Schema from "effect/Schema"

/** How many problems an import reports at most; the count says how many there were in all. */
export const MAX_REPORTED_PROBLEMS = 100

/** One thing wrong with one record: where it is in the file, and what is wrong. */
export const ImportProblem = Schema.Struct({
  collection: Schema.String,
  /** The record's index in its collection, from 0. */
  index: Schema.Number,
  /** The record's `ref`, when it has one. */
  ref: Schema.NullOr(Schema.String),
  /** The field as the file names it (`member_ref`, `lines.0.unit`); null when the rule is the record's as a whole. */
  field: Schema.NullOr(Schema.String),
  message: Schema.String
})
export type ImportProblem = typeof ImportProblem.Type

/** `members[2].status (ref "m3")`: where a problem is, as the file has it. */
export const problemPlace = (p: ImportProblem) =>
  `${p.collection}[${p.index}]${p.field === null ? "" : `.${p.field}`}${p.ref === null ? "" : ` (ref ${JSON.stringify(p.ref)})`}`

const plural = (n: number, one: string, many: string) => `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`

/**
 * Records of the file break rules: the first MAX_REPORTED_PROBLEMS problems in file order, and
 * how many problems and records there were in all. Nothing of the file was written.
 */
export class ImportInvalid extends Schema.TaggedError<ImportInvalid>()("ImportInvalid", {
  problems: Schema.Array(ImportProblem),
  problem_count: Schema.Number,
  record_count: Schema.Number
}) {
  readonly kind = "Invalid" as const
  /** Each problem keyed by where it is: `members.2.status`. */
  get errors() {
    const errors: Record<string, Array<string>> = {}
    for (const p of this.problems) (errors[[p.collection, p.index, ...(p.field === null ? [] : [p.field])].join(".")] ??= []).push(p.message)
    return errors
  }
  /** One line: how many records are invalid, and that nothing was written. */
  get summary() {
    const problems = this.problem_count === this.record_count ? "" : ` (${plural(this.problem_count, "problem", "problems")})`
    const shown = this.problem_count > this.problems.length ? `; the first ${this.problems.length} problems follow` : ""
    return `${plural(this.record_count, "record is", "records are")} invalid${problems}; nothing was written${shown}.`
  }
  /** The summary, then each problem on a line of its own: `members[2].status (ref "m3"): The selected status is invalid …`. */
  override get message() {
    return [this.summary, ...this.problems.map((p) => `  ${problemPlace(p)}: ${p.message}`)].join("\n")
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
