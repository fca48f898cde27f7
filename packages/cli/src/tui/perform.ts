/** Runs what state.ts asks for (a Task) against the data port; its Outcome goes back to state.ts. */
import type { AdminData, Progress } from "./AdminData.ts"
import type { Outcome, Task } from "./state.ts"

export const perform = async (data: AdminData, tenant: string, task: Task, progress: Progress): Promise<Outcome> => {
  switch (task.kind) {
    case "mint":
      return { kind: "minted", key: await data.mintKey(task.request) }
    case "revoke":
      await data.revokeKey(task.prefix)
      return { kind: "revoked" }
    case "reactivate":
      return { kind: "reactivated", count: await data.reactivate(task.ids, progress) }
    case "replay":
      return { kind: "replayed", result: await data.replay(task.ids, progress) }
    case "rotate":
      return { kind: "rotated", rotated: await data.rotateSecret(task.hookId) }
    case "findFailed":
      return { kind: "found", ids: await data.failedDeliveries({ tenant, hookId: task.hookId, since: task.since }) }
  }
}
