/**
 * `GET /healthz` (the process answers) and `GET /readyz` (the database answers within a second;
 * 503 otherwise), without a key, outside /api/v1 (docs/api.md "Health").
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { Readiness } from "@chamber/core"

/** The paths of the health checks, both served with GET (server/RouteIndex.ts). */
export const HEALTH_PATHS = ["/healthz", "/readyz"] as const

export const HealthRoutes = Layer.mergeAll(
  HttpRouter.add("GET", HEALTH_PATHS[0], HttpServerResponse.jsonUnsafe({ status: "ok" })),
  HttpRouter.use(Effect.fnUntraced(function*(router) {
    const readiness = yield* Readiness
    yield* router.add(
      "GET",
      HEALTH_PATHS[1],
      Effect.map(readiness.check, (ready) =>
        ready
          ? HttpServerResponse.jsonUnsafe({ status: "ready" })
          : HttpServerResponse.jsonUnsafe({ message: "The database does not answer." }, { status: 503 }))
    )
  }))
)
