/** The change feed handler: the core feed read with the key's scopes. */
import * as Effect from "effect/Effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { Changes } from "@chamber/core"
import { Api } from "../Api.ts"
import * as Respond from "../server/Respond.ts"
import { ChangesPage } from "./ChangesGroup.ts"

export const ChangesHandlers = HttpApiBuilder.group(Api, "changes", Effect.fn(function*(handlers) {
  const changes = yield* Changes
  return handlers.handle("changes", ({ query }) =>
    Respond.textForKey(ChangesPage, (key) => changes.readJson(key.tenantId, query, key.scopes)))
}))
