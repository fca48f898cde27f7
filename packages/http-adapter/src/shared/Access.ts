/**
 * Who may call an endpoint (docs/api.md "Authentication and scopes"): each endpoint states the scope it
 * requires, or `AnyValidKey` (GET /me). This module is the contract side, shared with clients:
 * the bearer middleware's declaration, the key a request carries, and the access annotation.
 * The implementation is server/AuthenticationLive.ts.
 */
import * as Context from "effect/Context"
import * as HttpApiMiddleware from "effect/http-api/HttpApiMiddleware"
import type { KeyContext, Scope } from "@chamber/core"
import { Forbidden, TooManyRequests, Unauthenticated, Unavailable, ValidationError } from "./HttpErrors.ts"

/** The access of an endpoint that needs a valid key and no scope. */
export const AnyValidKey: unique symbol = Symbol("AnyValidKey")

export type Access = Scope | typeof AnyValidKey

/** What an endpoint requires; one with none is refused at server start (server/ContractCheck.ts). */
export class RequiredAccess extends Context.Service<RequiredAccess, Access>()("chamber/http/RequiredAccess") {}

/** The key a request authenticated with. */
export class CurrentKey extends Context.Service<CurrentKey, KeyContext>()("chamber/http/CurrentKey") {}

export const describeAccess = (access: Access): string =>
  access === AnyValidKey ? "Any valid key; no scope is needed." : `Requires the \`${access}\` scope.`

/**
 * The bearer key of every endpoint. It reads the `Authorization` header itself rather than being
 * declared a security middleware, which would wrap every request in a second layer of effects;
 * the OpenAPI document states the scheme and each operation's scope (Api.ts, shared/Operation.ts).
 */
export class Authentication extends HttpApiMiddleware.Service<Authentication, { provides: CurrentKey }>()(
  "chamber/http/Authentication",
  { error: [Unauthenticated, TooManyRequests, Forbidden, ValidationError, Unavailable], requiredForClient: true }
) {}
