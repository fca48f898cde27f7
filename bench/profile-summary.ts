/**
 * Summarises a V8 .cpuprofile (e.g. from `BENCH_PROFILE=1 pnpm bench`): where the busy time went,
 * by category (Schema, Effect runtime, driver, JSON, socket writes...) and by function.
 *
 *   node bench/profile-summary.ts bench/profiles/CPU.*.cpuprofile [--last <seconds>]
 *
 * `--last N` keeps only the final N seconds of samples (the steady state, after start-up).
 */
import { readFileSync } from "node:fs"

const args = process.argv.slice(2)
const lastAt = args.indexOf("--last")
const lastSeconds = lastAt >= 0 ? Number(args[lastAt + 1]) : Infinity
const file = args.find((a, i) => !a.startsWith("--") && (lastAt < 0 || i !== lastAt + 1))
if (file === undefined) {
  console.error("usage: node bench/profile-summary.ts <file.cpuprofile> [--last <seconds>]")
  process.exit(2)
}

interface ProfileNode {
  readonly id: number
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
}
const profile = JSON.parse(readFileSync(file, "utf8")) as {
  nodes: Array<ProfileNode>
  samples: Array<number>
  timeDeltas: Array<number>
  startTime: number
  endTime: number
}
const nodes = new Map(profile.nodes.map((n) => [n.id, n]))

const short = (url: string) =>
  url.replace(/^file:\/\/.*?\/(packages|bench)\//, "$1/").replace(/^.*node_modules\/\.pnpm\/[^/]+\/node_modules\//, "")

const category = (n: ProfileNode): string => {
  const url = short(n.callFrame.url)
  const fn = n.callFrame.functionName
  if (fn === "(idle)") return "idle"
  if (fn === "(garbage collector)") return "GC"
  if (url === "") {
    if (/^write/.test(fn)) return "socket writes (native)"
    if (/Slice$/.test(fn)) return "string decoding (native)"
    return "other native"
  }
  if (/effect\/dist\/(Schema|SchemaAST|SchemaParser|SchemaIssue|internal\/schema|internal\/record)/.test(url)) return "effect Schema (encode/decode)"
  if (/effect\/dist\/http-api\/HttpApiBuilder\.js/.test(url) && /Response\.text/.test(fn)) return "JSON.stringify of responses"
  if (/effect\/dist\/(http|http-api)\//.test(url)) return "effect http / http-api"
  if (/effect\/dist\/sql\//.test(url)) return "effect sql"
  if (/effect\/dist\//.test(url)) return "effect runtime (fibers, Context, Pool, spans)"
  if (/@effect\/sql-pg/.test(url)) return "@effect/sql-pg driver"
  if (/@effect\/platform-node/.test(url)) return "@effect/platform-node"
  if (/^(pg|pg-protocol|pg-pool|pg-types|postgres-date)\//.test(url)) return "pg driver"
  if (/^packages\//.test(url)) return `app: ${url.split("/").slice(0, 2).join("/")}`
  if (/^bench\//.test(url)) return "bench code"
  if (/^node:/.test(url)) return "node core (http, streams, net, events)"
  return "other"
}
const label = (n: ProfileNode) => `${n.callFrame.functionName || "(anonymous)"}  ${short(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`

let at = profile.startTime
const from = profile.endTime - lastSeconds * 1e6
const byCategory = new Map<string, number>()
const byFunction = new Map<string, number>()
let busy = 0
let idle = 0
for (let i = 0; i < profile.samples.length; i++) {
  at += profile.timeDeltas[i] ?? 0
  if (at < from) continue
  const node = nodes.get(profile.samples[i]!)!
  const dt = profile.timeDeltas[i + 1] ?? 0
  const c = category(node)
  if (c === "idle") {
    idle += dt
    continue
  }
  busy += dt
  byCategory.set(c, (byCategory.get(c) ?? 0) + dt)
  byFunction.set(label(node), (byFunction.get(label(node)) ?? 0) + dt)
}

const top = (m: Map<string, number>, n: number) =>
  [...m].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, v]) => `  ${((100 * v) / busy).toFixed(1).padStart(5)}%  ${k}`).join("\n")

console.log(`${file}: busy ${(busy / 1e6).toFixed(2)} s, idle ${(idle / 1e6).toFixed(2)} s${Number.isFinite(lastSeconds) ? ` (last ${lastSeconds} s)` : ""}`)
console.log(`\nbusy time by category:\n${top(byCategory, 20)}`)
console.log(`\nbusy time by function (self):\n${top(byFunction, 25)}`)
