/**
 * Every request decode failure (path, query, body, malformed JSON) becomes the 422 of spec 7:
 * `{message, errors: {field: [messages]}}` with dotted paths for nested fields.
 */
import { Effect, SchemaIssue } from "effect"
import { HttpApiMiddleware } from "effect/http-api"
import { ValidationError } from "./HttpErrors.ts"

export class ValidationErrors extends HttpApiMiddleware.Service<ValidationErrors>()("chamber/http/ValidationErrors", {
  error: ValidationError
}) {}

const format = SchemaIssue.makeFormatterStandardSchemaV1()

const missingKey = (field: string) => `The ${field.replace(/_/g, " ")} field is required.`

export const issueErrors = (issue: SchemaIssue.Issue, rootField: string): Record<string, Array<string>> => {
  const errors: Record<string, Array<string>> = {}
  for (const i of format(issue).issues) {
    const field = (i.path ?? []).map((p) => String(typeof p === "object" && p !== null ? (p as any).key : p)).join(".")
    const key = field === "" ? rootField : field
    let message = i.message
    if (message === "Missing key") message = missingKey(key)
    else if (message === "Expected a valid JSON body") message = "The body must be valid JSON."
    else if (message.startsWith("Expected a string representing a finite number")) message = `The ${key.replace(/_/g, " ")} field must be a number.`
    else if (field === "" && /^Expected/.test(message)) message = "The body must be a JSON object."
    const list = (errors[key] ??= [])
    if (!list.includes(message)) list.push(message)
  }
  return errors
}

export const ValidationErrorsLive = HttpApiMiddleware.layerSchemaErrorTransform(ValidationErrors, (error) => {
  if (error.kind === "Body" || error.kind === "ResponseHeaders") return Effect.fail(error)
  const root = error.kind === "Payload" ? "body" : error.kind.toLowerCase()
  return Effect.fail(ValidationError.of(issueErrors(error.cause.issue, root)))
})
