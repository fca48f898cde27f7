/**
 * Checks of input that embedders hand the core directly, with no HTTP decoding before it
 * (sponsorships, placements and bookings are made this way; docs/api.md "Sponsorships",
 * "Placements", "Bookings"): the resource's schema with its 422-style messages, and references
 * that must be rows of the tenant. Both fail with InvalidInput naming the field.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { fieldErrors } from "../resource/Issues.ts"
import { InvalidInput } from "./Errors.ts"

/** `input` decoded by `schema` (every failing field reported, unknown fields dropped). */
export const decodeInput = <S extends Schema.ConstraintDecoder<unknown>>(schema: S, input: unknown): Effect.Effect<S["Type"], InvalidInput> =>
  Schema.decodeUnknownEffect(schema)(input, { errors: "all", onExcessProperty: "ignore" }).pipe(
    Effect.mapError((error) => new InvalidInput({ errors: fieldErrors(error.issue, "input") }))
  )

/**
 * A reference the input names (`member_id`) must be a row of the tenant, which `find` looks up:
 * else InvalidInput on that field, "The selected member id is invalid.". Null or absent is no reference.
 */
export const requireOwn = (
  field: string,
  id: number | null | undefined,
  find: (id: number) => Effect.Effect<unknown>
): Effect.Effect<void, InvalidInput> =>
  id == null
    ? Effect.void
    : Effect.flatMap(find(id), (row) =>
      row === undefined ? Effect.fail(InvalidInput.field(field, `The selected ${field.replace(/_/g, " ")} is invalid.`)) : Effect.void
    )
