/** Every request decode failure becomes the validation 422 (docs/api.md "Errors"), its fields named as the API names them. */
import * as Effect from "effect/Effect"
import * as HttpApiMiddleware from "effect/http-api/HttpApiMiddleware"
import { fieldErrors } from "@chamber/core"
import { ValidationError } from "../shared/HttpErrors.ts"
import { ValidationErrors } from "../shared/ValidationErrors.ts"

export const ValidationErrorsLive = HttpApiMiddleware.layerSchemaErrorTransform(ValidationErrors, (error) => {
  // A response of ours that does not fit the contract stays a server error.
  if (error.kind === "Body" || error.kind === "ResponseHeaders") return Effect.fail(error)
  const root = error.kind === "Payload" ? "body" : error.kind.toLowerCase()
  return Effect.fail(ValidationError.of(fieldErrors(error.cause.issue, root)))
})
