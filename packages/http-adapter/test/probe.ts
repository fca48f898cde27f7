/**
 * Probe APIs behind what wraps every request of the product (`serveApi`), for what the product's own API cannot
 * show: a contract the server must refuse, an endpoint that fails on purpose. Over a test socket.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as HttpRouter from "effect/http/HttpRouter"
import type * as HttpApi from "effect/http-api/HttpApi"
import type * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Keys, NoRateLimits, type Scope } from "@chamber/core"
import { DatabaseFailuresSql } from "@chamber/pg-adapter"
import { Authentication, CurrentKey, serveApi } from "../src/index.ts"

/** Lets every request in as one key holding `scope`: these probes are not about keys. */
export const probeKeyLive = (scope: Scope) =>
  Layer.succeed(Authentication)({
    bearer: (effect) =>
      Effect.provideService(effect, CurrentKey, {
        keyId: 1,
        tenantId: 1,
        name: "probe",
        prefix: "cck_probe000",
        scopes: [scope],
        dailyLimit: 25_000,
        chamber: { id: "chm_probe", name: "Probe", website: null }
      })
  })

/** `api` with `handlers` behind it, on a test socket; it knows no keys and limits nothing. */
export const serveProbe = <Id extends string, Groups extends HttpApiGroup.Constraint, E, R>(
  api: HttpApi.HttpApi<Id, Groups>,
  handlers: Layer.Layer<HttpApiGroup.ToService<Id, Groups>, E, R>
) =>
  HttpRouter.serve(serveApi(api, handlers), { disableLogger: true, disableListenLog: true }).pipe(
    Layer.provide([Layer.mock(Keys)({ authenticate: () => Effect.succeed(undefined) }), NoRateLimits, DatabaseFailuresSql]),
    Layer.provideMerge(NodeHttpServer.layerTest)
  )
