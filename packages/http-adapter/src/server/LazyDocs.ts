/**
 * The browsable reference at /docs, built on its first request: its page carries the reference
 * viewer's script, 3.2 MB that a server which never shows it should not hold in memory (bench/
 * README.md "Idle memory"). The page itself is the platform's Scalar page for the contract.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import type * as HttpApi from "effect/http-api/HttpApi"
import type * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiScalar from "effect/http-api/HttpApiScalar"

export const lazyDocs = <Id extends string, Groups extends HttpApiGroup.Constraint>(api: HttpApi.HttpApi<Id, Groups>, path: `/${string}`) =>
  Layer.unwrap(Effect.gen(function*() {
    // The page's router lives as long as the server: its scope is never closed.
    const scope = Scope.makeUnsafe()
    const page = yield* Effect.cached(
      HttpRouter.toHttpEffect(HttpApiScalar.layer(api, { path })).pipe(Scope.provide(scope))
    )
    return HttpRouter.add("GET", path, (request: HttpServerRequest.HttpServerRequest) =>
      page.pipe(
        Effect.flatMap((serve) => serve),
        Effect.provideService(HttpServerRequest.HttpServerRequest, request),
        Scope.provide(scope),
        Effect.orDie
      ))
  }))
