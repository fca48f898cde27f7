/** Webhook subscription handlers: each endpoint of HooksGroup as one call of the core service. */
import * as Effect from "effect/Effect"
import { Hooks } from "@chamber/core"
import * as Kit from "../server/Kit.ts"
import { group } from "../server/Group.ts"
import { HookList } from "./HooksGroup.ts"

export const HooksHandlers = group("hooks", Effect.fn(function*(handlers) {
  const hooks = yield* Hooks
  return handlers
    .handle("list", () => Kit.single(HookList, 200, (tenant) => hooks.list(tenant)))
    .handle("create", ({ payload }) => Kit.bare((tenant) => hooks.create(tenant, payload).pipe(Effect.map(({ created: _, ...hook }) => hook))))
    .handle("delete", ({ params }) => Kit.bare((tenant) => hooks.delete(tenant, params.hook)))
}))
