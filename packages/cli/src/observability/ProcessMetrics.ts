/**
 * The process's own metrics (docs/operations.md "Metrics"): CPU seconds, memory, and the event
 * loop's delay since the previous reading, each read when metrics are scraped or exported.
 */
import * as Context from "effect/Context"
import * as Metric from "effect/Metric"
import { monitorEventLoopDelay } from "node:perf_hooks"

const cpuSeconds = (mode: "user" | "system") =>
  Metric.counter("process_cpu_seconds_total", {
    description: "CPU time this process has used, in seconds, by mode (user, system).",
    incremental: true,
    attributes: { mode }
  })
const residentMemory = Metric.gauge("process_resident_memory_bytes", { description: "Resident memory of this process, in bytes." })
const heapUsed = Metric.gauge("nodejs_heap_used_bytes", { description: "JavaScript heap in use, in bytes." })
const loopDelay = (stat: "p50" | "p99" | "max") =>
  Metric.gauge("nodejs_eventloop_delay_seconds", {
    description: "How late the event loop ran timers since the previous reading, in seconds (p50, p99, max).",
    attributes: { stat }
  })

/** Starts watching the event loop; `read` updates every process metric. */
export const makeProcessMetrics = () => {
  const loop = monitorEventLoopDelay({ resolution: 10 })
  loop.enable()
  const user = cpuSeconds("user")
  const system = cpuSeconds("system")
  const delays = { p50: loopDelay("p50"), p99: loopDelay("p99"), max: loopDelay("max") }
  // From the process's start, as Prometheus's process_cpu_seconds_total counts.
  let last = { user: 0, system: 0 }
  return {
    read: () => {
      const context = Context.empty()
      const now = process.cpuUsage()
      user.updateUnsafe((now.user - last.user) / 1e6, context)
      system.updateUnsafe((now.system - last.system) / 1e6, context)
      last = now
      residentMemory.updateUnsafe(process.memoryUsage.rss(), context)
      heapUsed.updateUnsafe(process.memoryUsage().heapUsed, context)
      // The histogram is in nanoseconds; it starts afresh after each reading.
      if (loop.count > 0) {
        delays.p50.updateUnsafe(loop.percentile(50) / 1e9, context)
        delays.p99.updateUnsafe(loop.percentile(99) / 1e9, context)
        delays.max.updateUnsafe(loop.max / 1e9, context)
      }
      loop.reset()
    },
    stop: () => loop.disable()
  }
}
