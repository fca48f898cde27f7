/**
 * The contract's own guarantees: a server whose contract has an endpoint without access refuses
 * to start; the typed client tells the two 422s apart (docs/api.md "Errors"); the published
 * OpenAPI document states each operation's scope by the rule of docs/api.md "Authentication and
 * scopes", every declared scope is some operation's, and each lists only the errors it can answer.
 * Rules, not a row per operation: a new resource adds nothing here.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as HttpApi from "effect/http-api/HttpApi"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as HttpApiClient from "effect/http-api/HttpApiClient"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiMiddleware from "effect/http-api/HttpApiMiddleware"
import * as OpenApi from "effect/http-api/OpenApi"
import { readFileSync } from "node:fs"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { ALL_SCOPES } from "@chamber/core"
import {
  Api,
  Authentication,
  BusinessRuleError,
  ContractViolation,
  operation,
  ValidationError
} from "../src/index.ts"
import { ValidationErrors } from "../src/shared/ValidationErrors.ts"
import { makeRouteIndex } from "../src/server/RouteIndex.ts"
import { ValidationErrorsLive } from "../src/server/ValidationErrorsLive.ts"
import { probeKeyLive, serveProbe } from "./probe.ts"

/** Lets every request in as one key: these tests are about the contract, not about keys. */
const AnyKeyLive = probeKeyLive("invoices:write")

const rules = HttpApiEndpoint.post("issue", "/probe/issue", {
  payload: Schema.Struct({ amount: Schema.String }),
  success: Schema.Struct({ ok: Schema.Boolean }),
  error: [ValidationError, BusinessRuleError]
}).pipe(operation({ access: "invoices:write", summary: "Probe", description: "Answers either 422." }))

class ProbeGroup extends HttpApiGroup.make("probe").add(rules).middleware(Authentication) {}
class ProbeApi extends HttpApi.make("probe").add(ProbeGroup).middleware(ValidationErrors) {}

/** The same group with one endpoint that never says who may call it. */
class OpenGroup extends HttpApiGroup.make("probe")
  .add(rules, HttpApiEndpoint.get("open", "/probe/open", { success: Schema.String }))
  .middleware(Authentication) {}
class OpenApiContract extends HttpApi.make("probe").add(OpenGroup).middleware(ValidationErrors) {}

const ProbeHandlers = HttpApiBuilder.group(ProbeApi, "probe", (handlers) =>
  handlers.handle("issue", ({ payload }) =>
    payload.amount === "rule"
      ? Effect.fail(new BusinessRuleError({ message: "Only a draft invoice can be issued; this one is open." }))
      : Effect.fail(ValidationError.of({ amount: ["The amount must be a dollar amount such as 12.50."] }))))
  .pipe(Layer.provide([AnyKeyLive, ValidationErrorsLive]))

describe("the contract", () => {
  it.effect("a server whose contract has an endpoint without access refuses to start, naming it", () =>
    Effect.gen(function*() {
      const openHandlers = HttpApiBuilder.group(OpenApiContract, "probe", (handlers) =>
        handlers.handle("issue", () => Effect.succeed({ ok: true })).handle("open", () => Effect.succeed("open to all")))
        .pipe(Layer.provide([AnyKeyLive, ValidationErrorsLive]))
      const exit = yield* Layer.build(serveProbe(OpenApiContract, openHandlers)).pipe(Effect.scoped, Effect.exit)
      assert.isTrue(Exit.isFailure(exit))
      const defect = Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined
      assert.instanceOf(defect, ContractViolation)
      assert.deepStrictEqual((defect as ContractViolation).problems, [
        "GET /probe/open (probe.open) states no access: describe it with operation({ access, summary, description })"
      ])
    }))

  layer(serveProbe(ProbeApi, ProbeHandlers))((it) => {
    it.effect("the typed client decodes the validation 422 with its errors and the business-rule 422 without", () =>
      Effect.gen(function*() {
        const client = yield* HttpApiClient.make(ProbeApi)
        const field = yield* client.probe.issue({ payload: { amount: "12.5.0" } }).pipe(Effect.flip)
        assert.instanceOf(field, ValidationError)
        assert.deepStrictEqual((field as ValidationError).errors, { amount: ["The amount must be a dollar amount such as 12.50."] })
        const rule = yield* client.probe.issue({ payload: { amount: "rule" } }).pipe(Effect.flip)
        assert.instanceOf(rule, BusinessRuleError)
        assert.strictEqual(rule.message, "Only a draft invoice can be issued; this one is open.")
      }).pipe(
        Effect.provide(HttpApiMiddleware.layerClient(Authentication, ({ next, request }) => next(HttpClientRequest.bearerToken(request, "cck_x"))))
      ))
  })

  it("the route index names the route the router would: a literal segment wins over a path id, whatever the method", () => {
    const YearApi = HttpApi.make("year").add(
      HttpApiGroup.make("probe").add(
        HttpApiEndpoint.get("report", "/probe/2024/report", { success: Schema.String }),
        HttpApiEndpoint.delete("remove", "/probe/:year/report", { params: { year: Schema.String }, success: Schema.String })
      )
    )
    const routes = makeRouteIndex(YearApi, ["/healthz"])
    const found = (url: string) => {
      const route = routes(url)
      return route === undefined ? undefined : [route.template, route.allow]
    }
    assert.deepStrictEqual(found("/probe/2024/report?x=1"), ["/probe/2024/report", "GET, HEAD"])
    assert.deepStrictEqual(found("/probe/2025/report"), ["/probe/:year/report", "DELETE"])
    assert.deepStrictEqual(found("/healthz"), ["/healthz", undefined])
    for (const unknown of ["/probe/2024/report/", "/probe//report", "/probe/2024/", "/Probe/2024/report", "/probe/%32/report", "/nowhere"]) {
      assert.isUndefined(found(unknown), unknown)
    }
  })

  it("the OpenAPI document states each operation's documented scope (docs/api.md) and only its real errors", () => {
    const doc = OpenApi.fromApi(Api)
    // docs/api.md "Authentication and scopes": an operation needs the scope of the resource its
    // path names last (`/invoices/{invoice}/payments`: payments), `:read` to read and `:write` to
    // write; a resource without a read scope (hooks) is read with its write scope. Apart from it:
    const exceptions: Record<string, ReadonlyArray<string> | null | string> = {
      "get /api/v1/me": null,
      "post /api/v1/subscribers": "contacts:write",
      "get /api/v1/changes": [
        "members:read",
        "contacts:read",
        "invoices:read",
        "registrations:read",
        "deals:read",
        "events:read",
        "payments:read",
        "sponsorships:read",
        "placements:read",
        "bookings:read"
      ]
    }
    const resources = new Set(ALL_SCOPES.map((s) => s.split(":")[0]!))
    const ruled = (method: string, path: string): string => {
      const resource = path.split("/").filter((segment) => resources.has(segment)).at(-1)
      assert.isDefined(resource, `${method} ${path} names no resource`)
      const wanted = `${resource}:${method === "get" ? "read" : "write"}`
      return (ALL_SCOPES as ReadonlyArray<string>).includes(wanted) ? wanted : `${resource}:write`
    }
    // The errors an operation documents follow from its shape: 401, 429 and 503 always; 403 when
    // it needs a scope; 404 when its path names a row; 409 and 422 when it writes (POST, PATCH);
    // 422 when it takes query parameters; the change feed's 410 for an expired cursor.
    const required = new Set<string>()
    let operations = 0
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item as Record<string, OpenApi.OpenAPISpecOperation>)) {
        const name = `${method} ${path}`
        operations++
        const scope = name in exceptions ? exceptions[name]! : ruled(method, path)
        if (scope === null || typeof scope === "string") {
          assert.deepStrictEqual(op.security, [{ bearer: scope === null ? [] : [scope] }], name)
          assert.include(op.description, scope === null ? "Any valid key" : `Requires the \`${scope}\` scope.`, name)
        } else {
          assert.deepStrictEqual(op.security, scope.map((s) => ({ bearer: [s] })), name)
          assert.include(op.description, `Requires any of ${scope.map((s) => `\`${s}\``).join(", ")}`, name)
        }
        for (const s of scope === null ? [] : typeof scope === "string" ? [scope] : scope) required.add(s)
        const writes = method === "post" || method === "patch"
        const errors = [
          "401",
          ...(scope === null ? [] : ["403"]),
          ...(path.includes("{") ? ["404"] : []),
          ...(writes ? ["409"] : []),
          ...(path === "/api/v1/changes" ? ["410"] : []),
          ...(writes || op.parameters.some((p) => p.in === "query") ? ["422"] : []),
          "429",
          "503"
        ]
        assert.isString(op.summary, name)
        assert.deepStrictEqual(Object.keys(op.responses).filter((s) => s >= "400").sort(), errors, name)
        for (const parameter of op.parameters) {
          if (parameter.in === "path" || parameter.name === "page") assert.strictEqual((parameter.schema as { readonly type?: string }).type, "integer", `${name} ${parameter.name}`)
        }
      }
    }
    assert.isAtLeast(operations, 36)
    // Every scope a resource declares is one some operation requires: none is left over or misspelt.
    assert.sameMembers([...required], [...ALL_SCOPES])
    assert.deepStrictEqual(doc.components.securitySchemes.bearer, {
      type: "http",
      scheme: "bearer",
      bearerFormat: "cck_ + 40 characters",
      description: "An API key minted by a chamber admin."
    })
  })

  it("every scope a key can have is listed in docs/api.md, in the order the API, the CLI and the TUI show them", () => {
    const api = readFileSync(join(dirname(fileURLToPath(import.meta.url)), "../../../docs/api.md"), "utf8")
    const start = api.indexOf("Scopes, in the order")
    const paragraph = api.slice(start, api.indexOf(".\n", start))
    assert.deepStrictEqual([...paragraph.matchAll(/`([a-z]+:(?:read|write))`/g)].map((m) => m[1]), [...ALL_SCOPES])
  })

  it("the client-facing contract entry loads no server code: no handler, middleware implementation, storage or Node server", () => {
    const src = join(dirname(fileURLToPath(import.meta.url)), "../src")
    const seen = new Set<string>()
    const packages = new Set<string>()
    const visit = (file: string) => {
      if (seen.has(file)) return
      seen.add(file)
      for (const [, spec] of readFileSync(file, "utf8").matchAll(/^(?:import|export)[^"']*from\s+["']([^"']+)["']/gm)) {
        if (spec!.startsWith(".")) visit(join(dirname(file), spec!))
        else packages.add(spec!)
      }
    }
    visit(join(src, "contract.ts"))
    const files = [...seen].map((f) => relative(src, f)).sort()
    assert.deepStrictEqual(files.filter((f) => f.startsWith("server/") || f === "Server.ts" || /Handlers\.ts$/.test(f)), [])
    assert.deepStrictEqual([...packages].filter((p) => !p.startsWith("effect") && p !== "@chamber/core"), [])
    assert.include(files, "shared/Access.ts")
  })
})
