/** The connection check: which chamber, which key, what it may do. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { canWrite } from "@chamber/core"
import { Api } from "../Api.ts"
import { CurrentKey } from "../shared/Authentication.ts"

export const MeHandlers = HttpApiBuilder.group(Api, "me", (handlers) =>
  handlers.handle("me", () =>
    Effect.gen(function*() {
      const key = yield* CurrentKey
      return {
        chamber: key.chamber,
        key: { name: key.name, prefix: key.prefix, scopes: key.scopes, can_write: canWrite(key.scopes) },
        label: `${key.chamber.name} (${key.name})`
      }
    })))
