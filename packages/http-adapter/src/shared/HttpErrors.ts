/** The error bodies (docs/api.md "Errors"). Each encodes to exactly the fields shown. */
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import { summarize } from "@chamber/core"

export class Unauthenticated extends Schema.Error<Unauthenticated>("Unauthenticated")(
  { message: Schema.String },
  { httpApiStatus: 401, description: "Missing, malformed or revoked key" }
) {
  readonly _tag = "Unauthenticated" as const
  static readonly body = new Unauthenticated({ message: "Unauthenticated." })
}

export class Forbidden extends Schema.Error<Forbidden>("Forbidden")(
  { message: Schema.String },
  { httpApiStatus: 403, description: "The key lacks the endpoint's scope; the message names it" }
) {
  readonly _tag = "Forbidden" as const
  static readonly lacking = (scope: string) => new Forbidden({ message: `This key lacks the ${scope} scope.` })
}

export class NotFoundError extends Schema.Error<NotFoundError>("NotFound")(
  { message: Schema.String },
  { httpApiStatus: 404, description: "No such row in this chamber's data" }
) {
  readonly _tag = "NotFoundError" as const
  static readonly body = new NotFoundError({ message: "Not found." })
}

export class ValidationError extends Schema.Error<ValidationError>("ValidationError")(
  { message: Schema.String, errors: Schema.Record(Schema.String, Schema.Array(Schema.String)) },
  { httpApiStatus: 422, description: "Request validation failed: `errors` names each failing field" }
) {
  readonly _tag = "ValidationError" as const

  /** The first message, plus ` (and N more errors)` when there are more. */
  static readonly of = (errors: Readonly<Record<string, ReadonlyArray<string>>>) =>
    new ValidationError({ message: summarize(errors), errors })
}

/**
 * A well-formed request that breaks a business rule: `{message}` with no `errors`.
 * Where an endpoint may answer both 422s, ValidationError is declared first, so a client tries
 * the shape with `errors` before this one (server/ContractCheck.ts keeps that order).
 */
export class BusinessRuleError extends Schema.Error<BusinessRuleError>("BusinessRuleError")(
  { message: Schema.String },
  { httpApiStatus: 422, description: "A well-formed request that breaks a business rule" }
) {
  readonly _tag = "BusinessRuleError" as const
}

/** What the request points at is no longer kept (a change-feed cursor past retention): resync. */
export class Gone extends Schema.Error<Gone>("Gone")(
  { message: Schema.String },
  { httpApiStatus: 410, description: "The cursor is older than the events kept: resync from the lists, then start again with `after=head`" }
) {
  readonly _tag = "Gone" as const
}

/** A request the server cannot answer for a fault of its own that its operator must mend; nothing was changed. */
export class ServiceUnavailable extends Schema.Error<ServiceUnavailable>("ServiceUnavailable")(
  { message: Schema.String },
  { httpApiStatus: 503, description: "The server cannot answer this request until its operator mends its configuration; the message says why. Nothing was changed." }
) {
  readonly _tag = "ServiceUnavailable" as const
}

/** Plain messages for statuses answered outside an endpoint. */
export const statusMessages: Record<number, string> = {
  400: "Bad request.",
  401: "Unauthenticated.",
  404: "Not found.",
  405: "Method not allowed.",
  413: "The request body is larger than 1 MiB.",
  415: "Unsupported media type: send the body as application/json.",
  500: "Server error.",
  503: "The database does not answer; try again shortly."
}

/** Where `error` stands among an endpoint's declared errors (-1: not declared). Endpoints hold JSON codecs of the classes, so they are matched by identifier. */
export const declaredAt = (declared: Iterable<Schema.Top>, error: Schema.Top): number => {
  const id = SchemaAST.resolveIdentifier(error.ast)
  return [...declared].findIndex((s) => SchemaAST.resolveIdentifier(s.ast) === id)
}

export class TooManyRequests extends Schema.Error<TooManyRequests>("TooManyRequests")(
  { message: Schema.String },
  {
    httpApiStatus: 429,
    description: "The key's rate limit is reached (120 requests in any 60 seconds, and its daily ceiling, 25,000 by default, in any " +
      "24 hours): wait the `Retry-After` seconds, then a retry is admitted"
  }
) {
  readonly _tag = "TooManyRequests" as const
  static readonly body = new TooManyRequests({ message: "Too many requests." })
}

/**
 * The database does not answer (ruling 27): restarting, failing over, unreachable, or the embedded
 * database held past its bounded wait. Answered around every request (server/JsonErrors.ts) with
 * `Retry-After`, for every endpoint; declared on the bearer middleware so that every operation
 * lists it.
 */
export class Unavailable extends Schema.Error<Unavailable>("Unavailable")(
  { message: Schema.String },
  {
    httpApiStatus: 503,
    description: "The database does not answer: nothing was done, unless the connection went while a write was being committed " +
      "(then look, with a list or a search, before creating again); try again after `Retry-After` seconds"
  }
) {
  readonly _tag = "Unavailable" as const
}
