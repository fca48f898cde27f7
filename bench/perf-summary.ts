/**
 * Summarises a `perf record` of a server (`PER_FLOW_PERF=1 node bench/per-flow.ts`): on-CPU
 * samples, so unlike V8's own profiler (which samples wall time) a socket write counts for the
 * CPU it took, not for the time the process waited. Each sample goes to the nearest JavaScript
 * frame of its stack (V8's builtins, the collector's work on the main thread and the kernel's
 * work for it are charged to the code that called them), grouped by layer, then by function; the
 * samples of V8's helper threads are one line. Figures are µs a flow.
 *
 *   node bench/perf-summary.ts bench/profiles/<server>.<db>.round<N>.perf.data <flows> [--top N]
 */
import { spawnSync } from "node:child_process"

const args = process.argv.slice(2)
const topAt = args.indexOf("--top")
const top = topAt >= 0 ? Number(args[topAt + 1]) : 30
const [file, flowsArg] = args.filter((a, i) => !a.startsWith("--") && (topAt < 0 || i !== topAt + 1))
const flows = Number(flowsArg)
if (file === undefined || !(flows > 0)) {
  console.error("usage: node bench/perf-summary.ts <perf.data> <flows> [--top N]")
  process.exit(2)
}
const HZ = 2999 // per-flow.ts records at this frequency

const script = spawnSync("perf", ["script", "-i", file, "-F", "comm,tid,ip,sym"], { encoding: "utf8", maxBuffer: 1 << 30 })
if (script.status !== 0) throw new Error(`perf script: ${script.stderr}`)

const short = (frame: string) =>
  frame
    .replace(/^JS:[*+^~']*\s*/, "")
    .replace(/(file:\/\/)?\/[^ ]*node_modules\/\.pnpm\/[^/]+\/node_modules\//, "")
    .replace(/file:\/\/\/[^ ]*?\/(packages|bench)\//, "$1/")
    .replace(/ \(\/tmp\/perf-\d+\.map\)$/, "")

const layer = (frame: string): string => {
  if (/effect\/dist\/sql\//.test(frame)) return "effect sql"
  if (/effect\/dist\/(Schema|internal\/schema)/.test(frame)) return "effect Schema"
  if (/effect\/dist\/http/.test(frame)) return "effect http"
  if (/effect\/dist\//.test(frame)) return "effect runtime"
  if (/@effect\/sql-pg/.test(frame)) return "@effect/sql-pg"
  if (/@effect\/platform-node/.test(frame)) return "@effect/platform-node"
  if (/(^| )(pg|pg-protocol|pg-pool|pg-types)\//.test(frame)) return "pg driver"
  if (/(^| )packages\//.test(frame)) return `app: ${frame.split("packages/")[1]!.split("/")[0]}`
  if (/(^| )bench\//.test(frame)) return "bench code"
  if (/ node:/.test(frame)) return "node core"
  return "other JavaScript"
}

const byLayer = new Map<string, number>()
const byFunction = new Map<string, number>()
const add = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1)
let samples = 0
for (const block of script.stdout.split("\n\n")) {
  const lines = block.split("\n").filter((l) => l.trim() !== "")
  if (lines.length === 0) continue
  samples++
  if (!lines[0]!.trim().startsWith("MainThread")) {
    add(byLayer, "V8 helper threads (GC, compiler)")
    continue
  }
  const frames = lines.slice(1).map((l) => l.trim().split(/\s+/).slice(1).join(" "))
  const js = frames.find((f) => f.startsWith("JS:"))
  if (js === undefined) {
    add(byLayer, "main thread, no JavaScript frame (event loop, collector, parser)")
    continue
  }
  const name = short(js)
  add(byLayer, layer(` ${name}`))
  add(byFunction, name)
}

const perFlow = (n: number) => ((n / HZ) * 1e6) / flows
const rows = (map: Map<string, number>, n: number) =>
  [...map].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, v]) => `  ${perFlow(v).toFixed(1).padStart(8)}  ${k}`).join("\n")
console.log(`${file}: ${samples} samples, ${perFlow(samples).toFixed(0)} µs of CPU a flow`)
console.log(`\nby layer (µs a flow):\n${rows(byLayer, 30)}`)
console.log(`\nby function, builtins and the kernel's work charged to their caller (µs a flow):\n${rows(byFunction, top)}`)
