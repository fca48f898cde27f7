/** Webhook subscription handlers: each endpoint of HooksGroup as one call of the core service. */
import * as Effect from "effect/Effect"
import { bodyOrEmpty } from "../server/RawRequest.ts"
import * as Respond from "../server/Respond.ts"
import { groupHandlers } from "../shared/Served.ts"
import { HookDeliveryList, HookPings, Hooks } from "@chamber/core"
import { HookDeliveryResponse, HookHealthResponse, HookList, HooksGroup, PingResponse, RecoverResponse, RotatedSecretResponse } from "./HooksGroup.ts"

export default groupHandlers(HooksGroup, Effect.fn(function*(handlers) {
  const hooks = yield* Hooks
  const pings = yield* HookPings
  return handlers
    .handle("list", () => Respond.single(HookList, 200, (tenant) => hooks.list(tenant)))
    .handle("create", ({ payload }) => Respond.bare((tenant) => hooks.create(tenant, payload).pipe(Effect.map(({ created: _, ...hook }) => hook))))
    .handle("delete", ({ params }) => Respond.bare((tenant) => hooks.delete(tenant, params.hook)))
    .handle("get", ({ params }) => Respond.single(HookHealthResponse, 200, (tenant) => hooks.get(tenant, params.hook)))
    .handle("deliveries", ({ params, query }) =>
      Respond.page(HookDeliveryList, query.page, (tenant, page) => hooks.deliveries(tenant, params.hook, query.status, page)))
    .handle("replay", ({ params }) => Respond.single(HookDeliveryResponse, 202, (tenant) => hooks.replay(tenant, params.hook, params.delivery)))
    .handle("recover", ({ params, payload }) => Respond.single(RecoverResponse, 202, (tenant) => hooks.recover(tenant, params.hook, payload)))
    .handle("ping", ({ params }) => Respond.single(PingResponse, 200, (tenant) => pings.ping(tenant, params.hook)))
    .handle("rotateSecret", ({ params, payload, request }) =>
      Effect.flatMap(bodyOrEmpty(request, payload, {}), (input) =>
        Respond.single(RotatedSecretResponse, 200, (tenant) => hooks.rotateSecret(tenant, params.hook, input))))
}))
