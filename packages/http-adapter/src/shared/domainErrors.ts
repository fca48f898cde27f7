/** Core's domain errors as the HTTP errors of spec 7. */
import { Effect } from "effect"
import type { BusinessRuleViolation, NotFound, ValidationFailed } from "@chamber/core"
import { BusinessRuleError, NotFoundError, ValidationError } from "./HttpErrors.ts"

type DomainError = NotFound | ValidationFailed | BusinessRuleViolation
type HttpError<E> =
  | (E extends NotFound ? NotFoundError : never)
  | (E extends ValidationFailed ? ValidationError : never)
  | (E extends BusinessRuleViolation ? BusinessRuleError : never)

export const fromDomain = <A, E extends DomainError, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, HttpError<E>, R> =>
  Effect.mapError(self, (e: DomainError) => {
    switch (e._tag) {
      case "NotFound":
        return NotFoundError.body
      case "ValidationFailed":
        return ValidationError.of(e.errors)
      case "BusinessRuleViolation":
        return new BusinessRuleError({ message: e.message })
    }
  }) as any
