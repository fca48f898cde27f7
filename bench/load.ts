/**
 * Load on a server (autocannon, keep-alive) in rounds taken in turn, and the figures of a
 * server's rounds: units/s, p50/p99, CPU per unit, peak RSS (bench/README.md "The figures").
 */
import autocannon from "autocannon"
import { cpuSeconds, procStatus, type Server } from "./processes.ts"
import { CONNECTIONS, f, percentile, ROUNDS, WARMUP } from "./shared.ts"

export interface World {
  readonly keys: { readonly read: string; readonly write: string }
  readonly memberIds: ReadonlyArray<number>
}

/** What is sent: one request, or a flow's requests one after the other on a connection. */
export interface Load {
  readonly id: string
  readonly name: string
  readonly key: keyof World["keys"]
  readonly steps: ReadonlyArray<string>
  /** autocannon's `requests`: the sequence each connection repeats. */
  readonly requests: (world: World) => Array<Record<string, unknown>>
}

export const getLoad = (id: string, name: string, path: (world: World) => string) => ({
  id,
  name,
  key: "read" as const,
  steps: [name],
  requests: (world: World) => [{ method: "GET", path: path(world) }]
})

/**
 * A server's rounds: units (requests, or flows) whose every response was 2xx, per second; their latency; CPU a unit, all of
 * it and its main thread's (the JavaScript; the rest is V8's collector and compiler threads); peak RSS; failures.
 */
export type Measured = {
  readonly rps: number; readonly p50: number; readonly p99: number; readonly cpuMs: number; readonly mainMs: number; readonly peakRssMb: number; readonly bad: number
}

type OnResponse = (client: any, status: number, time: number) => void

/** autocannon's run with `options`, its result; `onResponse` sees every response. */
export const cannon = (options: Record<string, unknown>, onResponse?: OnResponse) =>
  new Promise<any>((resolve, reject) => {
    const instance = autocannon(options, (error: unknown, result: any) => (error ? reject(error) : resolve(result)))
    if (onResponse !== undefined) instance.on("response", (client: unknown, status: number, _bytes: number, time: number) => onResponse(client, status, time))
  })

const fire = (base: string, load: Load, world: World, seconds: number, onResponse?: OnResponse) =>
  cannon({ url: base, connections: CONNECTIONS, duration: seconds, headers: { authorization: `Bearer ${world.keys[load.key]}` }, requests: load.requests(world) }, onResponse)

/** One server's rounds of one load: `round` runs one and gives its rate, `result` the figures of all of them. */
const tally = (server: Server, load: Load) => {
  /** Per unit: a request's latency, or a flow's (the sum of its steps'). */
  const latencies: Array<number> = []
  let [ok, bad, seconds, cpu, main, peakRssMb] = [0, 0, 0, 0, 0, 0]
  const round = async (world: World, duration: number) => {
    const pid = server.child.pid!
    const sample = () => void (peakRssMb = Math.max(peakRssMb, procStatus(pid, "VmRSS") || 0))
    const last = load.steps.length - 1
    // Each connection's flow so far: its steps are sent one after the other on it.
    const flows = new Map<unknown, { sum: number; ok: boolean }>()
    const onResponse: OnResponse = (client, status, time) => {
      const good = status >= 200 && status < 300
      // With pipelining 1, the iterator still points at the request this response answers.
      const step = last === 0 ? 0 : (client.requestIterator.currentRequestIndex as number)
      let flow = flows.get(client)
      if (step === 0 || flow === undefined) flows.set(client, flow = { sum: 0, ok: true })
      flow.sum += time
      flow.ok &&= good
      if (step < last) return
      if (flow.ok) {
        ok++
        latencies.push(flow.sum)
      }
      flows.delete(client)
    }
    sample()
    const sampler = setInterval(sample, 100)
    const [cpuBefore, mainBefore, okBefore] = [cpuSeconds(pid), cpuSeconds(pid, pid), ok]
    const r = await fire(server.base, load, world, duration, onResponse).finally(() => clearInterval(sampler))
    cpu += cpuSeconds(pid) - cpuBefore
    main += cpuSeconds(pid, pid) - mainBefore
    bad += r.non2xx + r.errors + r.timeouts
    seconds += r.duration
    sample()
    return (ok - okBefore) / r.duration
  }
  const result = (): Measured => {
    const pct = percentile(latencies)
    const perUnit = (seconds: number) => (ok > 0 ? (seconds * 1000) / ok : NaN)
    return { rps: ok / seconds, p50: pct(50), p99: pct(99), cpuMs: perUnit(cpu), mainMs: perUnit(main), peakRssMb, bad }
  }
  return { round, result }
}

/**
 * Each load on its server (labelled, by default with the server's name) warmed up for WARMUP
 * seconds, then ROUNDS rounds of `seconds` in all each, taken in turn, each after `before` (a
 * settled database): the figures by label.
 */
export const inTurn = async (
  runs: ReadonlyArray<readonly [Server, Load, string?]>, world: World, seconds: number, progress: (line: string) => void, before?: () => Promise<void>
) => {
  for (const [server, load] of runs) await fire(server.base, load, world, WARMUP)
  const tallies = runs.map(([server, load, label = server.name]) => ({ load, label, ...tally(server, load) }))
  for (let round = 1; round <= ROUNDS; round++) {
    for (const tally of tallies) {
      await before?.()
      const rate = await tally.round(world, seconds / ROUNDS)
      progress(`${tally.load.id} round ${round}/${ROUNDS} ${tally.label}: ${f(rate)} ${tally.load.steps.length > 1 ? "flows" : "req"}/s`)
    }
  }
  return tallies.map((t) => [t.label, t.result()] as const)
}

/** A table of figures, one row a tallied server (or variant). */
export const printRows = (log: (line: string) => void, title: string, first: string, unit: string, rows: ReadonlyArray<readonly [string, Measured]>) => {
  const width = Math.max(13, ...rows.map(([name]) => name.length + 2))
  const cells = (values: ReadonlyArray<string>) => `  ${values[0]!.padEnd(width)}${values.slice(1).map((v) => v.padStart(12)).join("")}`
  log(`\n${title}`)
  log(cells([first, `${unit}s/s`, "p50 ms", "p99 ms", `CPU ms/${unit}`, "main thread", "peak RSS MB", "non-2xx/err"]))
  for (const [name, m] of rows) log(cells([name, f(m.rps), f(m.p50), f(m.p99), f(m.cpuMs, 3), f(m.mainMs, 3), f(m.peakRssMb), String(m.bad)]))
}
