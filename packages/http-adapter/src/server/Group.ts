/**
 * A group's handlers, as `HttpApiBuilder.group` makes them, with one difference: while they
 * answer, handlers may use only what the request brings (its key, the request itself). The build
 * function still gets every service, and the handlers keep what they need of it
 * (`const members = yield* Members`). HttpApiBuilder merges the context a group was built in
 * into each of its requests, a copy of every service per request; here that context is the
 * middleware alone (docs/architecture.md "What a request's fiber holds"). A handler that would
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

type ApiId = typeof Api extends HttpApi.HttpApi<infer Id, infer _> ? Id : never
type ApiGroups = typeof Api extends HttpApi.HttpApi<infer _, infer Groups> ? Groups : never

type GroupNamed<Name extends string> = HttpApiGroup.WithIdentifier<ApiGroups, Name>

/** The middleware the contract puts on a group's endpoints (the bearer key, the 422 transform). */
type MiddlewareOf<Name extends string> = HttpApiEndpoint.Middleware<HttpApiGroup.Endpoints<GroupNamed<Name>>>

/** What a handler may need while it answers: the request, its key, and the middleware that gives it. */
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
    const all = yield* Effect.context<any>()
    const withAll = (handlers: HttpApiBuilder.Handlers.FromGroup<GroupNamed<Name>>) => {
      const built = build(handlers)
      return Effect.isEffect(built) ? Effect.provideContext(built, all) : built
    }
    // The group keeps the context it is built in: here, the middleware its endpoints declare, alone.
    const declared = new Set<Context.Key<any, any>>([Scope.Scope])
    for (const endpoint of Object.values(Api.groups[name].endpoints)) for (const key of endpoint.middlewares) declared.add(key)
    const middleware = Context.pick(...declared)(all)
    return yield* Layer.build(HttpApiBuilder.group(Api, name, withAll as never)).pipe(Effect.setContext(middleware))
  })) as never
