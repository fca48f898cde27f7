/**
 * A 200 JSON response written directly, for the hot list endpoints. Their rows come from core
 * already in the contract's shape (the suites decode them with the contract's schemas), so
 * encoding a page of 100 resources through the success schema again would only cost CPU:
 * about a fifth of a members page's (see bench/README.md).
 */
import { HttpServerResponse } from "effect/http"

export const jsonBody = <A>(body: A): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.text(JSON.stringify(body), { contentType: "application/json" })
