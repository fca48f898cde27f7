/**
 * Who may call an endpoint (docs/api.md "Authentication and scopes"): each endpoint states the scope it
 * requires, or `AnyValidKey` (GET /me). This module is the contract side, shared with clients:
 * the bearer middleware's declaration, the key a request carries, and the access annotation.
 * The implementation is server/AuthenticationLive.ts.
 */
import * as Context from "effect/Context"
import * as HttpApiMiddleware from "effect/http-api/HttpApiMiddleware"
import * as HttpApiSecurity from "effect/http-api/HttpApiSecurity"
import * as OpenApi from "effect/http-api/OpenApi"
import type { KeyContext, Scope } from "@chamber/core"
import { Forbidden, TooManyRequests, Unauthenticated, Unavailable, ValidationError } from "./HttpErrors.ts"

/** The access of an endpoint that needs a valid key and no scope. */
export const AnyValidKey: unique symbol = Symbol("AnyValidKey")

/**
 * The access of an endpoint any of several scopes opens, each for part of what it answers (the
 * change feed: each event kind to its resource's read scope). A key with none is a 403 naming the first.
 */
export interface AnyOfScopes {
  readonly anyOf: readonly [Scope, ...Array<Scope>]
}

export type Access = Scope | typeof AnyValidKey | AnyOfScopes

/** The scopes that let a key in (none: any valid key). */
export const scopesOf = (access: Access): ReadonlyArray<Scope> =>
  access === AnyValidKey ? [] : typeof access === "string" ? [access] : access.anyOf

/**
 * The scope a key with `scopes` is refused naming for `access`, or undefined when they open it:
 * checked per request without building the list `scopesOf` gives.
 */
export const missingScope = (access: Access, scopes: ReadonlyArray<Scope>): Scope | undefined =>
  access === AnyValidKey
    ? undefined
    : typeof access === "string"
    ? (scopes.includes(access) ? undefined : access)
    : access.anyOf.some((s) => scopes.includes(s))
    ? undefined
    : access.anyOf[0]

/** What an endpoint requires; one with none is refused at server start (server/ContractCheck.ts). */
export class RequiredAccess extends Context.Service<RequiredAccess, Access>()("chamber/http/RequiredAccess") {}

/** The key a request authenticated with. */
export class CurrentKey extends Context.Service<CurrentKey, KeyContext>()("chamber/http/CurrentKey") {}

export const describeAccess = (access: Access): string =>
  access === AnyValidKey
    ? "Any valid key; no scope is needed."
    : typeof access === "string"
    ? `Requires the \`${access}\` scope.`
    : `Requires any of ${access.anyOf.map((s) => `\`${s}\``).join(", ")}; a key with none is refused naming \`${access.anyOf[0]}\`.`

/** The scheme of every key: `Authorization: Bearer <key>`, as the OpenAPI document names it. */
const ApiKeyBearer = HttpApiSecurity.bearer.pipe(
  HttpApiSecurity.annotate(OpenApi.Format, "cck_ + 40 characters"),
  HttpApiSecurity.annotate(OpenApi.Description, "An API key minted by a chamber admin.")
)

/**
 * The bearer key of every endpoint, declared as the framework's bearer scheme: the framework
 * reads the credential (the scheme in any case, then spaces) and publishes the scheme in the
 * OpenAPI document; each operation's scope is its own (shared/Operation.ts). Every failure to
 * authenticate, whatever its cause, is the one 401 body.
 */
export class Authentication extends HttpApiMiddleware.Service<Authentication, { provides: CurrentKey }>()(
  "chamber/http/Authentication",
  {
    security: { bearer: ApiKeyBearer },
    error: [Unauthenticated, TooManyRequests, Forbidden, ValidationError, Unavailable],
    requiredForClient: true
  }
) {}

/**
 * Every POST and PATCH of /api/v1 with an Idempotency-Key runs under it (ruling 28, docs/api.md
 * "Retrying safely"): declared before `Authentication` in each group, so it runs inside it (which
 * claims the key) and sees the handler's failures as the endpoint declares them. The
 * implementation is server/Idempotency.ts; a malformed key is the validation 422.
 */
export class Idempotent extends HttpApiMiddleware.Service<Idempotent>()("chamber/http/Idempotent", {
  error: ValidationError
}) {}
