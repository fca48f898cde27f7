/** Path and query parameters shared by every group (spec 4 common rules, rulings 1-3). */
import { Effect, Schema } from "effect"
import { NotFoundError } from "./HttpErrors.ts"

/** `page`: integer >= 1, default 1 (ruling 2). */
export const PageQuery = Schema.optionalKey(
  Schema.Int.annotate({ message: "The page field must be an integer of at least 1." }).check(
    Schema.isGreaterThanOrEqualTo(1, { message: "The page field must be an integer of at least 1." })
  )
)

/** `sort`: any string; an unknown value means the default order. */
export const SortQuery = Schema.optionalKey(Schema.String)

/**
 * A path id named as the spec names it (`{member}`), kept as text so that a non-integer is a
 * 404 like a missing row (ruling 1).
 */
export const idParam = <const N extends string>(name: N) => ({ [name]: Schema.String }) as { readonly [K in N]: Schema.String }

const ID = /^[1-9][0-9]{0,15}$/

export const parseId = (raw: string): Effect.Effect<number, NotFoundError> =>
  ID.test(raw) ? Effect.succeed(Number(raw)) : Effect.fail(NotFoundError.body)
