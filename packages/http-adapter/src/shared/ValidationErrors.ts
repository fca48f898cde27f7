/**
 * The contract's 422 for every request that fails to decode (path, query, body, malformed
 * JSON): `{message, errors}` (docs/api.md "Errors"). The transform is server/ValidationErrorsLive.ts.
 */
import * as HttpApiMiddleware from "effect/http-api/HttpApiMiddleware"
import { ValidationError } from "./HttpErrors.ts"

export class ValidationErrors extends HttpApiMiddleware.Service<ValidationErrors>()("chamber/http/ValidationErrors", {
  error: ValidationError
}) {}
