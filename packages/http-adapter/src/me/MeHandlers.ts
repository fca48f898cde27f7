/** The connection check: which chamber, which key, what it may do. */
import { canWrite, type KeyContext } from "@chamber/core"
import * as Respond from "../server/Respond.ts"
import { groupHandlers } from "../shared/Served.ts"
import { ConnectionInfo, MeGroup } from "./MeGroup.ts"

const connectionInfo = (key: KeyContext) => ({
  chamber: key.chamber,
  key: { name: key.name, prefix: key.prefix, scopes: key.scopes, can_write: canWrite(key.scopes) },
  label: `${key.chamber.name} (${key.name})`
})

export default groupHandlers(MeGroup, (handlers) =>
  handlers.handle("me", () => Respond.fromKey(ConnectionInfo, connectionInfo)))
