/**
 * What a domain error means to a caller. Every error of core is a tagged class named after a
 * domain fact (`MemberNotFound`, `SlugTaken`) that carries its own message and one of these
 * kinds; the HTTP adapter maps each kind to one status in one place (docs/api.md "Errors").
 */
import * as Schema from "effect/Schema"
import { type FieldErrors, summarize } from "../resource/Issues.ts"

/** No such row in this tenant (another tenant's row included): a 404. */
export interface NotFoundKind {
  readonly kind: "NotFound"
  readonly message: string
}

/** Input that breaks a per-field rule: a 422 `{message, errors}`. */
export interface InvalidKind {
  readonly kind: "Invalid"
  readonly message: string
  readonly errors: FieldErrors
}

/** A well-formed request that breaks a business rule: a 422 `{message}` (docs/api.md "Errors"). */
export interface BusinessRuleKind {
  readonly kind: "BusinessRule"
  readonly message: string
}

/** A request the server cannot answer for a fault of its own that its operator must mend: a 503 `{message}`. */
export interface UnavailableKind {
  readonly kind: "Unavailable"
  readonly message: string
}

/** The key lacks a scope the request needs (the message names it): a 403 `{message}`. */
export interface ForbiddenKind {
  readonly kind: "Forbidden"
  readonly message: string
}

/** What the request points at is no longer kept (a feed cursor past retention): a 410 `{message}`. */
export interface GoneKind {
  readonly kind: "Gone"
  readonly message: string
}

export type DomainError = NotFoundKind | InvalidKind | BusinessRuleKind | UnavailableKind | ForbiddenKind | GoneKind

/** Administrative input (tenants, people, keys) that breaks a rule, by field. */
export class InvalidInput extends Schema.TaggedError<InvalidInput>()("InvalidInput", {
  errors: Schema.Record(Schema.String, Schema.Array(Schema.String))
}) {
  readonly kind = "Invalid" as const
  static readonly field = (field: string, message: string) => new InvalidInput({ errors: { [field]: [message] } })
  override get message() {
    return summarize(this.errors)
  }
}
