/**
 * `pnpm bench`'s change feed section (BENCH_ONLY=changes, bench/README.md "Change feed"): the feed
 * read after the first page's cursor (100 events) against the members page (100 members), on our
 * server alone, in rounds taken in turn. Bar: the feed's throughput >= the page's.
 */
import { getLoad, inTurn, printRows } from "./load.ts"
import { startServer, stopChild } from "./processes.ts"
import { seedOn } from "./seed-data.ts"
import { CONNECTIONS, DURATION, f, machine, ROUNDS, type SectionContext, verdict, WARMUP } from "./shared.ts"

const MEMBERS = Number(process.env.BENCH_CHANGES_MEMBERS ?? 1_000)
const BAR = 1

export const benchChanges = async (ctx: SectionContext): Promise<void> => {
  const { elapsed, log } = ctx
  log(`\nchange feed: ${MEMBERS} members (one member.created each), ${CONNECTIONS} connections, warm-up ${WARMUP} s + ${DURATION} s per endpoint in ${ROUNDS} rounds`)
  const { keys } = await seedOn(ctx.dbUrl, { name: "Feed Bench Chamber", fields: false, members: MEMBERS, keys: { read: ["Feed reader", "read"] } })
  const server = await startServer("ours", "our-server.ts", ctx.dbUrl)
  const world = { keys: { read: keys.read, write: keys.read }, memberIds: [] }
  const get = async (path: string) => (await fetch(`${server.base}${path}`, { headers: { authorization: `Bearer ${keys.read}` } })).json() as Promise<any>
  try {
    const first = await get("/api/v1/changes")
    if (first.data?.length !== 100) throw new Error(`change feed bench: the feed did not answer 100 events: ${JSON.stringify(first).slice(0, 200)}`)
    if ((await get("/api/v1/members?page=1")).data?.length !== 100) throw new Error("change feed bench: the members page did not answer 100 members")
    // From the first page's cursor: each request reads the 100 events after it.
    const cursorPath = `/api/v1/changes?after=${encodeURIComponent(first.meta.next_cursor)}`
    const loads = [getLoad("changes", "GET /api/v1/changes?after=<cursor>", () => cursorPath), getLoad("changes", "GET /api/v1/members?page=1", () => "/api/v1/members?page=1")]
    const rows = await inTurn(loads.map((load) => [server, load, load.name] as const), world, DURATION, (line) => log(`[${elapsed()}] ${line}`))
    log(`\n=== change feed: ${machine()} ===`)
    printRows(log, "our server", "endpoint", "req", rows)
    const [feed, page] = [rows[0]![1], rows[1]![1]]
    const ratio = feed.rps / page.rps
    verdict(log, ratio >= BAR, `the change feed serves 100 events at ${f(ratio, 2)}x the members page's throughput (bar >= ${BAR}x)`, feed.bad + page.bad === 0)
  } finally {
    await stopChild(server.child)
  }
}
