/** The connection check: which chamber, which key, what it may do. */
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { canWrite, type KeyContext } from "@chamber/core"
import { Api } from "../Api.ts"
import * as Respond from "../server/Respond.ts"
import { ConnectionInfo } from "./MeGroup.ts"

const connectionInfo = (key: KeyContext) => ({
  chamber: key.chamber,
  key: { name: key.name, prefix: key.prefix, scopes: key.scopes, can_write: canWrite(key.scopes) },
  label: `${key.chamber.name} (${key.name})`
})

export const MeHandlers = HttpApiBuilder.group(Api, "me", (handlers) =>
  handlers.handle("me", () => Respond.fromKey(ConnectionInfo, connectionInfo)))
