/**
 * What every answer says beyond its body (docs/api.md "Response headers"):
 * `X-Content-Type-Options: nosniff`, so no browser takes an answer for another type than it
 * states (a JSON error for a page or a script); and `Cache-Control: no-store` unless the answer
 * states a caching rule of its own (the documentation, revalidated by its ETag): a chamber's
 * data is kept by no shared cache and no browser.
 */
import type * as HttpServerResponse from "effect/http/HttpServerResponse"

/** The fields of an answer that states no caching rule of its own. */
export const ANSWER_FIELDS: Readonly<Record<string, string>> = { "cache-control": "no-store", "x-content-type-options": "nosniff" }

const NOSNIFF: Readonly<Record<string, string>> = { "x-content-type-options": "nosniff" }

/** The fields `response` gets: its own caching rule is kept. */
export const answerFields = (response: HttpServerResponse.HttpServerResponse): Readonly<Record<string, string>> =>
  response.headers["cache-control"] === undefined ? ANSWER_FIELDS : NOSNIFF
