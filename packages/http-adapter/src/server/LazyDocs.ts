/**
 * The browsable reference at /docs, built on its first request: its page carries the reference
 * viewer's script, which a server that never shows it should not hold in memory (bench/
 * README.md "Memory"). The page itself is the platform's Scalar page for the contract,
 * without the viewer's default fonts (fetched from their own host), and with a
 * Content-Security-Policy that lets it run its own scripts and nothing else (docs/api.md
 * "Response headers").
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import type * as HttpApi from "effect/http-api/HttpApi"
import type * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiScalar from "effect/http-api/HttpApiScalar"
import { createHash } from "node:crypto"

/**
 * The page's policy: its inline scripts (the viewer and the call that starts it) by their
 * SHA-256, and no other script, eval included; its own styles, inline too, as the viewer adds
 * its style elements while it runs; images of its own or made by it (its icons are `data:`);
 * requests to this server only (the viewer's "Test request"); no plugin, frame, form or base.
 * A script's text is hashed as the browser reads it, line breaks as LF (HTML's preprocessing).
 */
const policyOf = (html: string): string => {
  const hashes = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map(([, script]) =>
    `'sha256-${createHash("sha256").update(script!.replace(/\r\n?/g, "\n")).digest("base64")}'`
  )
  return [
    "default-src 'none'",
    `script-src ${hashes.join(" ")}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self'",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'"
  ].join("; ")
}

/** The page with its policy; the policy is worked out once, from the first page (the page never changes). */
const withPolicy = () => {
  let policy: string | undefined
  return (response: HttpServerResponse.HttpServerResponse) => {
    if (response.body._tag !== "Uint8Array") return response
    policy ??= policyOf(new TextDecoder().decode(response.body.body))
    return HttpServerResponse.setHeader(response, "content-security-policy", policy)
  }
}

/**
 * The viewer as the page starts it: the system's fonts (its own come from its vendor's host), the
 * bearer key preselected so every example request carries `Authorization: Bearer`, and none of
 * the vendor's own tools or links (sharing, SDK generation, its site), which lead off this server.
 * Options the platform's type does not list yet are passed through to the viewer as they are.
 */
const scalar = {
  withDefaultFonts: false,
  authentication: { preferredSecurityScheme: "bearer" },
  showDeveloperTools: "never",
  customCss: "a[href^=\"https://www.scalar.com\"] { display: none; }"
}

export const lazyDocs = <Id extends string, Groups extends HttpApiGroup.Constraint>(api: HttpApi.HttpApi<Id, Groups>, path: `/${string}`) =>
  Layer.unwrap(Effect.gen(function*() {
    // The page's router lives as long as the server: its scope is never closed.
    const scope = Scope.makeUnsafe()
    const page = yield* Effect.cached(
      HttpRouter.toHttpEffect(HttpApiScalar.layer(api, { path, scalar })).pipe(Scope.provide(scope))
    )
    const secured = withPolicy()
    return HttpRouter.add("GET", path, (request: HttpServerRequest.HttpServerRequest) =>
      page.pipe(
        Effect.flatMap((serve) => serve),
        Effect.map(secured),
        Effect.provideService(HttpServerRequest.HttpServerRequest, request),
        Scope.provide(scope),
        Effect.orDie
      ))
  }))
