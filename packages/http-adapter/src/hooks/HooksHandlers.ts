/** Webhook subscription handlers: each endpoint of HooksGroup as one call of the core service. */
import * as Effect from "effect/Effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { Hooks } from "@chamber/core"
import { Api } from "../Api.ts"
import * as Respond from "../server/Respond.ts"
import { HookList } from "./HooksGroup.ts"

export const HooksHandlers = HttpApiBuilder.group(Api, "hooks", Effect.fn(function*(handlers) {
  const hooks = yield* Hooks
  return handlers
    .handle("list", () => Respond.single(HookList, 200, (tenant) => hooks.list(tenant)))
    .handle("create", ({ payload }) => Respond.bare((tenant) => hooks.create(tenant, payload).pipe(Effect.map(({ created: _, ...hook }) => hook))))
    .handle("delete", ({ params }) => Respond.bare((tenant) => hooks.delete(tenant, params.hook)))
}))
