/**
 * The progress of a replay (docs/admin.md "Replaying failed deliveries"): the replayed
 * deliveries are followed, whatever the list's filter, until each is delivered or fails again.
 */
import type { DeliveryView } from "./AdminData.ts"
import type { Tone } from "./screens/ScreenFrame.ts"

const answer = (d: DeliveryView) => {
  const last = d.attempts[d.attempts.length - 1]
  if (last === undefined) return ""
  return ` (${last.status ?? last.error ?? "no answer"}${last.status !== null ? ` in ${last.latency_ms} ms` : ""})`
}

export const trackingLine = (
  tracking: { readonly ids: ReadonlyArray<number>; readonly label: string },
  rows: ReadonlyArray<DeliveryView> | undefined
): { text: string; tone: Tone } => {
  const head = `Replayed ${tracking.label}:`
  if (rows === undefined) return { text: `${head} queued again…`, tone: "busy" }
  if (tracking.ids.length === 1 && rows.length === 1) {
    const d = rows[0]!
    if (d.status === "succeeded") return { text: `${head} delivered${answer(d)} ✓`, tone: "ok" }
    if (d.status === "failed") return { text: `${head} failed again${answer(d)}`, tone: "error" }
    return { text: `${head} waiting to be sent${d.attempt_count > 0 ? `, ${d.attempt_count} failed so far${answer(d)}` : ""}…`, tone: "busy" }
  }
  const count = (status: DeliveryView["status"]) => rows.filter((d) => d.status === status).length
  const [ok, failed, waiting] = [count("succeeded"), count("failed"), count("pending")]
  return {
    text: `${head} ${ok} delivered, ${failed} failed again, ${waiting} waiting${waiting > 0 ? "…" : ""}`,
    tone: waiting > 0 ? "busy" : failed > 0 ? "error" : "ok"
  }
}
