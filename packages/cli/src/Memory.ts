/**
 * Memory a long-running command gives back once it has started (bench/README.md "Idle memory"):
 * starting (loading modules, migrating, seeding the demo) grows V8's young generation to its
 * largest, 64 MB that an idle server would otherwise keep. One garbage collection that reduces
 * memory, as V8 does under memory pressure, returns it; traffic grows it again as it needs.
 */
import * as Effect from "effect/Effect"
import { executionAsyncResource } from "node:async_hooks"
import { Session } from "node:inspector"
import { servingFlags } from "./ServingFlags.ts"

/**
 * V8's collection on a low-memory notification (the last-resort flavor: everything collectable,
 * the heap shrunk to what is live), asked for through the inspector's
 * `HeapProfiler.collectGarbage` on a session of this process, which V8 answers once it has run.
 * Not through `gc` taken from a new `vm` context, as `--expose-gc` alone would allow: creating a
 * second context, even one discarded at once, made every later request a quarter dearer for the
 * life of the process (bench/README.md "What the collection changed, and V8's settings measured
 * anew"). Where Node has no inspector, or it does not answer within 5 s, nothing is collected:
 * a larger idle heap, not an error.
 */
const lowMemoryCollection = Effect.callback<void>((resume) => {
  let session: Session
  try {
    session = new Session()
    session.connect()
  } catch {
    return resume(Effect.void)
  }
  let open = true
  const done = () => {
    if (!open) return
    open = false
    clearTimeout(timer)
    session.disconnect()
    resume(Effect.void)
  }
  const timer = setTimeout(done, 5_000)
  // Answered from within the inspector's dispatch, where disconnecting and going on hangs the
  // thread: the session is closed on the next turn of the event loop instead.
  session.post("HeapProfiler.collectGarbage", () => setImmediate(done))
  return Effect.sync(done)
})

/**
 * One of Node's tick objects (what `process.nextTick` queues), kept for the life of the process
 * (bench/README.md "What the collection broke (an eighth session)"). A memory-reducing collection
 * drops every object shape no live object has, where a regular one keeps recent shapes a while.
 * Node builds each tick object as a literal with three symbol keys, and V8's inline cache for
 * such a key knows one shape: shown another, it gives up for good, and every later key goes
 * through V8's runtime. Dropping the tick objects' shape did that to every `process.nextTick`,
 * some ten a request (GET /me 8 to 10% dearer in CPU for the life of the process). A tick object
 * alive during the collection keeps its shape, and after it, through V8's own memory-reducing
 * collections when the server idles.
 */
let keptTick: object | undefined
const keepTickShape = Effect.callback<void>((resume) => {
  process.nextTick(() => {
    keptTick ??= executionAsyncResource()
    resume(Effect.void)
  })
})

const megabytes = (bytes: number) => Math.round(bytes / 2 ** 20)

/**
 * Once started: collect for serving, keep a tick object's shape, collect everything collectable
 * and shrink the heap to what is live. Logged at debug with what it took, the RSS after it and
 * the Node flags the process runs with (docs/operations.md "Memory").
 */
export const settleMemory = Effect.gen(function*() {
  const started = performance.now()
  yield* servingFlags
  yield* keepTickShape
  yield* lowMemoryCollection
  yield* Effect.logDebug("memory settled").pipe(Effect.annotateLogs({
    ms: Math.round(performance.now() - started),
    rss_mb: megabytes(process.memoryUsage.rss()),
    node_flags: process.execArgv.join(" ")
  }))
})
