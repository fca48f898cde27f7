/**
 * `GET /healthz` (the process answers) and `GET /readyz` (the database answers within a second;
 * 503 otherwise), without a key, outside /api/v1 (docs/api.md "Health").
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { Readiness } from "@chamber/core"

export const HealthRoutes = Layer.mergeAll(
  HttpRouter.add("GET", "/healthz", HttpServerResponse.jsonUnsafe({ status: "ok" })),
  HttpRouter.use(Effect.fnUntraced(function*(router) {
    const readiness = yield* Readiness
    yield* router.add(
      "GET",
      "/readyz",
      Effect.map(readiness.check, (ready) =>
        ready
          ? HttpServerResponse.jsonUnsafe({ status: "ready" })
          : HttpServerResponse.jsonUnsafe({ message: "The database does not answer." }, { status: 503 }))
    )
  }))
)
