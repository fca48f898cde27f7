/**
 * Input the core library takes from embedders and imports, checked with the same schemas and
 * messages as the API's (docs/api.md "Errors"): a bad value is an `InvalidInput` naming its field.
 */
import { Effect, Schema } from "effect"
import { fieldErrors } from "../resource/Issues.ts"
import { InvalidInput } from "./Errors.ts"

export const decodeInput = <S extends Schema.Codec<unknown, unknown, never, never>>(schema: S) => {
  const decode = Schema.decodeUnknownEffect(schema)
  return (input: unknown): Effect.Effect<S["Type"], InvalidInput> =>
    decode(input, { errors: "all", onExcessProperty: "ignore" }).pipe(
      Effect.mapError((error) => new InvalidInput({ errors: fieldErrors(error.issue, "input") }))
    )
}
