/** Every request decode failure becomes the validation 422 (docs/api.md "Errors"), its fields named as the API names them. */
import * as Effect from "effect/Effect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpApiMiddleware from "effect/http-api/HttpApiMiddleware"
import { describeJsonSyntax, fieldErrors } from "@chamber/core"
import { ValidationError } from "../shared/HttpErrors.ts"
import { ValidationErrors } from "../shared/ValidationErrors.ts"

/** What is wrong with a body that is not JSON, and where (line and column), or undefined when it parses. */
const jsonSyntaxError = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  // The body was read already to decode it: this is the same text, kept by the request.
  const text = yield* Effect.orElseSucceed(request.text, () => "")
  try {
    JSON.parse(text)
    return undefined
  } catch {
    return `The body must be valid JSON: ${describeJsonSyntax(text)}.`
  }
})

export const ValidationErrorsLive = HttpApiMiddleware.layerSchemaErrorTransform(ValidationErrors, (error) =>
  Effect.gen(function*() {
    // A response of ours that does not fit the contract stays a server error.
    if (error.kind === "Body" || error.kind === "ResponseHeaders") return yield* Effect.fail(error)
    const root = error.kind === "Payload" ? "body" : error.kind.toLowerCase()
    const errors = fieldErrors(error.cause.issue, root)
    const syntax = error.kind === "Payload" && errors.body !== undefined ? yield* jsonSyntaxError : undefined
    return yield* Effect.fail(ValidationError.of(syntax === undefined ? errors : { body: [syntax] }))
  }))
