/**
 * A group's handlers, registered as with `HttpApiBuilder.group` (`handlers.handle(...)`), served
 * by server/EndpointRoute.ts. The build function gets every service and the handlers keep what
 * they need of it (`const members = yield* Members`); while they answer they may use only what
 * the request brings (its key, the request itself), so a request's fiber carries no service of
 * the application (docs/architecture.md "What a request's fiber holds"). A handler that would
 * reach for another service while it answers does not compile.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import type * as HttpRouter from "effect/http/HttpRouter"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import type * as HttpApi from "effect/http-api/HttpApi"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import type * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import type * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import { Api } from "../Api.ts"
import type { CurrentKey } from "../shared/Access.ts"
import { endpointRoute, reflectGroup } from "./EndpointRoute.ts"

type ApiId = typeof Api extends HttpApi.HttpApi<infer Id, infer _> ? Id : never
type ApiGroups = typeof Api extends HttpApi.HttpApi<infer _, infer Groups> ? Groups : never

type GroupNamed<Name extends string> = HttpApiGroup.WithIdentifier<ApiGroups, Name>

/** The middleware the contract puts on a group's endpoints (the bearer key, the 422 transform). */
type MiddlewareOf<Name extends string> = HttpApiEndpoint.Middleware<HttpApiGroup.Endpoints<GroupNamed<Name>>>

/**
 * What a handler may need while it answers: the request and its key. HttpApiBuilder's types count
 * the endpoints' middleware among every handler's needs; they are applied at start and are not
 * in a request's context.
 */
export type RequestServices<Name extends string> =
  | MiddlewareOf<Name>
  | CurrentKey
  | HttpServerRequest.HttpServerRequest
  | HttpServerRequest.ParsedSearchParams
  | HttpRouter.RouteContext

type HandlerServices<A> = A extends HttpApiBuilder.Handlers<infer R, infer _E, infer _H> ? R
  : A extends Effect.Effect<HttpApiBuilder.Handlers<infer R, infer _E, infer _H>, infer _EX, infer _RX> ? R
  : never

type BuildServices<A> = A extends Effect.Effect<infer _A, infer _EX, infer RX> ? RX : never

type OnlyRequestServices<Name extends string, Return> = [Exclude<HandlerServices<Return>, RequestServices<Name>>] extends [never] ? unknown
  : { readonly "a handler needs a service while it answers; take it in the build function instead": Exclude<HandlerServices<Return>, RequestServices<Name>> }

export const group = <const Name extends HttpApiGroup.Identifier<ApiGroups>, Return>(
  name: Name,
  build: (
    handlers: HttpApiBuilder.Handlers.FromGroup<GroupNamed<Name>>
  ) => HttpApiBuilder.Handlers.ValidateReturn<Return> & OnlyRequestServices<Name, Return>
): Layer.Layer<
  HttpApiGroup.Service<ApiId, Name>,
  HttpApiBuilder.Handlers.Error<Return>,
  Exclude<BuildServices<Return>, Scope.Scope> | MiddlewareOf<Name>
> =>
  Layer.effectContext(Effect.gen(function*() {
    const contract = Api.groups[name] as unknown as HttpApiGroup.Top
    const registry = handlersOf(contract)
    const built = build(registry as never) as unknown
    if (Effect.isEffect(built)) yield* (built as Effect.Effect<unknown, unknown, unknown>)
    const all = yield* Effect.context<never>()
    const reflected = reflectGroup(Api, name)
    const routes = [...registry.handlers.values()].map(({ endpoint, handler }) =>
      endpointRoute(reflected.get(endpoint.identifier)!, handler, all))
    // What HttpApiBuilder.layer reads of a group: its routes, and its handlers' endpoints.
    return Context.makeUnsafe(new Map([[contract.key, { routes, handlers: registry.handlers }]]))
  })) as never

interface Registered {
  readonly endpoint: HttpApiEndpoint.Top
  readonly handler: (request: any) => Effect.Effect<unknown, unknown, unknown>
}

/** What a group's build function registers its handlers on: `handle(identifier, handler)`, each endpoint once. */
const handlersOf = (contract: HttpApiGroup.Top) => {
  const handlers = new Map<string, Registered>()
  const registry = {
    handlers,
    handle(identifier: string, handler: Registered["handler"]) {
      const endpoint = contract.endpoints[identifier]
      if (endpoint === undefined) throw new Error(`${contract.identifier} has no endpoint ${identifier}`)
      if (handlers.has(identifier)) throw new Error(`${contract.identifier}.${identifier} is handled twice`)
      handlers.set(identifier, { endpoint, handler })
      return registry
    }
  }
  return registry
}
