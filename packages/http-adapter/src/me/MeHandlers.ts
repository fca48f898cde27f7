/** The connection check: which chamber, which key, what it may do. */
import { canWrite, type KeyContext } from "@chamber/core"
import * as Kit from "../server/Kit.ts"
import { group } from "../server/Group.ts"
import { ConnectionInfo } from "./MeGroup.ts"

const connectionInfo = (key: KeyContext) => ({
  chamber: key.chamber,
  key: { name: key.name, prefix: key.prefix, scopes: key.scopes, can_write: canWrite(key.scopes) },
  label: `${key.chamber.name} (${key.name})`
})

export const MeHandlers = group("me", (handlers) =>
  handlers.handle("me", () => Kit.fromKey(ConnectionInfo, connectionInfo)))
