/** A typed client for embedders and the CLI, derived from the same contract the server serves. */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import type * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as HttpApiClient from "effect/http-api/HttpApiClient"
import * as HttpApiMiddleware from "effect/http-api/HttpApiMiddleware"
import { Api } from "./Api.ts"
import { Authentication } from "./shared/Access.ts"

/** The client `makeClient` builds: one method per endpoint, grouped (`client.members.get`, `client.me.me`). */
export type ChamberClient = HttpApiClient.ForApi<typeof Api>

/** `HttpApiClient` for `baseUrl`, sending `key` as the bearer token. Needs an HttpClient. */
export const makeClient = (baseUrl: string, key: string): Effect.Effect<ChamberClient, never, HttpClient.HttpClient> =>
  HttpApiClient.make(Api, { baseUrl }).pipe(
    Effect.provide(
      HttpApiMiddleware.layerClient(Authentication, ({ next, request }) => next(HttpClientRequest.bearerToken(request, key)))
    )
  )

/** The fetch-based HttpClient, for callers without one. */
export const FetchClientLive: Layer.Layer<HttpClient.HttpClient> = FetchHttpClient.layer
