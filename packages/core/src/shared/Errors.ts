/** Domain errors shared by every resource. HTTP status mapping lives in the http-adapter. */
import { Schema } from "effect"

/** A row that does not exist in this tenant (another tenant's row included). */
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", {
  resource: Schema.String,
  id: Schema.String
}) {}

/** Input that passed the schema but breaks a per-field rule (a taken slug, say). */
export class ValidationFailed extends Schema.TaggedError<ValidationFailed>()("ValidationFailed", {
  errors: Schema.Record(Schema.String, Schema.Array(Schema.String))
}) {}

/** A well-formed request that breaks a business rule (spec 7, the message-only 422). */
export class BusinessRuleViolation extends Schema.TaggedError<BusinessRuleViolation>()("BusinessRuleViolation", {
  message: Schema.String
}) {}
