/**
 * The admin TUI's state machine (docs/admin.md): one pure function from the state and an event
 * (a key, the chambers loaded, an action's progress or end) to the next state, so keys typed
 * faster than the screen redraws still apply in order and the behaviour is testable without a
 * terminal. App.ts runs the actions it asks for (`task`).
 */
import { applyKey } from "./keyActions.ts"
import { error, type Event, info, ok, type Outcome, plural, type State, type Task } from "./model.ts"

export * from "./model.ts"

const DOING: Readonly<Record<Task["kind"], string>> = {
  mint: "mint the key",
  revoke: "revoke the key",
  reactivate: "reactivate",
  replay: "replay",
  rotate: "rotate the secret",
  findFailed: "find the failed deliveries"
}

export const reduce = (s: State, e: Event): State => {
  switch (e.type) {
    case "tenants": {
      if (s.tenant !== undefined && !e.tenants.some((t) => t.id === s.tenant)) {
        return { ...s, tenant: undefined, tenantGiven: false, screen: "tenants", notice: error(`No chamber ${s.tenant}: choose one.`) }
      }
      if (s.tenant === undefined && s.screen === "tenants" && e.tenants.length === 1 && s.notice === undefined) {
        return { ...s, tenant: e.tenants[0]!.id, screen: s.lastView }
      }
      return s
    }
    case "progress":
      return { ...s, progress: { done: e.done, total: e.total } }
    case "failed":
      return { ...s, task: undefined, progress: undefined, notice: error(`Could not ${DOING[e.task.kind]}: ${e.message}`), refresh: s.refresh + 1 }
    case "done":
      return { ...finished(s, e.task, e.outcome), task: undefined, progress: undefined, refresh: s.refresh + 1 }
    case "key": {
      // A replay's progress belongs to the view it was asked from: another view starts with a clear status line.
      const next = applyKey(s, e.input, e.key, e.shown)
      return next.screen === s.screen ? next : { ...next, tracking: undefined }
    }
  }
}

const finished = (s: State, task: Task, outcome: Outcome): State => {
  switch (outcome.kind) {
    case "minted":
      return { ...s, overlay: { kind: "minted", key: outcome.key }, notice: undefined }
    case "revoked":
      return { ...s, notice: ok(task.kind === "revoke" ? `Revoked ${task.name} (${task.prefix}): it answers 401 from now on.` : "Revoked.") }
    case "rotated":
      return { ...s, overlay: { kind: "rotated", rotated: outcome.rotated }, notice: undefined }
    case "reactivated":
      return { ...s, notice: ok(`Reactivated ${plural(outcome.count, "subscription")}: failure counts at 0, waiting deliveries go out.`) }
    case "replayed": {
      const { replayed, skipped } = outcome.result
      const label = task.kind === "replay" ? task.label : ""
      return {
        ...s,
        tracking: replayed.length === 0 ? s.tracking : { ids: replayed, label },
        notice: replayed.length === 0
          ? info(`Nothing to replay: ${plural(skipped.length, "delivery", "deliveries")} already waiting to be sent.`)
          : undefined
      }
    }
    case "found": {
      if (task.kind !== "findFailed") return s
      if (outcome.ids.length === 0) return { ...s, notice: info(`No failed deliveries ${task.label}.`) }
      return {
        ...s,
        overlay: {
          kind: "confirm",
          question: `Replay ${plural(outcome.ids.length, "failed delivery", "failed deliveries")} ${task.label}?`,
          task: { kind: "replay", ids: outcome.ids, label: `${plural(outcome.ids.length, "delivery", "deliveries")} ${task.label}` }
        }
      }
    }
  }
}
