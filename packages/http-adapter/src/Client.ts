/** A typed client for embedders and the CLI, derived from the same contract the server serves. */
import { Effect, Layer } from "effect"
import { FetchHttpClient, HttpClientRequest } from "effect/http"
import { HttpApiClient, HttpApiMiddleware } from "effect/http-api"
import { Api } from "./Api.ts"
import { Authentication } from "./shared/Authentication.ts"

export type ChamberClient = HttpApiClient.Client<typeof Api extends { groups: any } ? any : never, never, never>

/** `HttpApiClient` for `baseUrl`, sending `key` as the bearer token. Needs an HttpClient. */
export const makeClient = (baseUrl: string, key: string) =>
  HttpApiClient.make(Api, { baseUrl }).pipe(
    Effect.provide(
      HttpApiMiddleware.layerClient(Authentication, ({ next, request }) => next(HttpClientRequest.bearerToken(request, key)))
    )
  )

/** The fetch-based HttpClient, for callers without one. */
export const FetchClientLive: Layer.Layer<any> = FetchHttpClient.layer
