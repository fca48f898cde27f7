/** The change feed handler: the core feed read with the key's scopes. */
import * as Effect from "effect/Effect"
import { Changes } from "@chamber/core"
import * as Respond from "../server/Respond.ts"
import { groupHandlers } from "../shared/Served.ts"
import { ChangesGroup, ChangesPage } from "./ChangesGroup.ts"

export default groupHandlers(ChangesGroup, Effect.fn(function*(handlers) {
  const changes = yield* Changes
  return handlers.handle("changes", ({ query }) =>
    Respond.textForKey(ChangesPage, (key) => changes.readJson(key.tenantId, query, key.scopes)))
}))
