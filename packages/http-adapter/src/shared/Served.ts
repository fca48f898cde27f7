/**
 * One list of the API's groups, each with where its handlers are (`Api.ts` `Groups`): the
 * contract is derived from it and so are the server's handlers (`Server.ts` `HandlersLive`).
 * The handlers are a dynamic import, so a client loading the contract never loads them; a
 * group without handlers cannot be written, and an endpoint without one does not compile.
 */
import type * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import type * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import type { ValidationErrors } from "./ValidationErrors.ts"

/** A group as `Api` serves it: every endpoint with the 422 transform. */
export type InApi<G extends HttpApiGroup.Constraint> = HttpApiGroup.AddMiddleware<G, ValidationErrors>

/** A group's handlers, as `HttpApiBuilder.group` builds them (`Server.ts`). */
export interface GroupHandlers<G extends HttpApiGroup.Constraint, Return> {
  readonly group: G
  readonly build: (handlers: HttpApiBuilder.Handlers.FromGroup<InApi<G>>) => HttpApiBuilder.Handlers.ValidateReturn<Return>
}

/**
 * The handlers of `group`, each endpoint one `handlers.handle(...)`, as with
 * `HttpApiBuilder.group(Api, ...)`; a handlers module's default export.
 */
export const groupHandlers = <G extends HttpApiGroup.Constraint, Return>(
  group: G,
  build: (handlers: HttpApiBuilder.Handlers.FromGroup<InApi<G>>) => HttpApiBuilder.Handlers.ValidateReturn<Return>
): GroupHandlers<G, Return> => ({ group, build })

/** A group of the API and the module of its handlers. */
export interface Served<G extends HttpApiGroup.Constraint, Return> {
  readonly group: G
  readonly handlers: () => Promise<{ readonly default: GroupHandlers<G, Return> }>
}

export const served = <G extends HttpApiGroup.Constraint, Return>(
  group: G,
  handlers: () => Promise<{ readonly default: GroupHandlers<G, Return> }>
): Served<G, Return> => ({ group, handlers })

/** The groups of a list of `served`, in its order. */
export type GroupsOf<T extends ReadonlyArray<Served<HttpApiGroup.Constraint, unknown>>> = {
  readonly [K in keyof T]: T[K] extends Served<infer G, infer _> ? G : never
}

export const groupsOf = <const T extends ReadonlyArray<Served<HttpApiGroup.Constraint, unknown>>>(list: T): GroupsOf<T> =>
  list.map((entry) => entry.group) as unknown as GroupsOf<T>
