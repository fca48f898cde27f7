/**
 * Memory a long-running command gives back once it has started (bench/README.md "Idle memory"):
 * starting (loading modules, migrating, seeding the demo) grows V8's young generation to its
 * largest, 64 MB that an idle server would otherwise keep. One garbage collection that reduces
 * memory, as V8 does under memory pressure, returns it; traffic grows it again as it needs.
 */
import * as Effect from "effect/Effect"
import { Session } from "node:inspector"
import { setFlagsFromString } from "node:v8"

/**
 * V8's collection on a low-memory notification (the last-resort flavor: everything collectable,
 * the heap shrunk to what is live), asked for through the inspector's
 * `HeapProfiler.collectGarbage` on a session of this process, which V8 answers once it has run.
 * Not through `gc` taken from a new `vm` context, as `--expose-gc` alone would allow: creating a
 * second context, even one discarded at once, made every later request a quarter dearer for the
 * life of the process (bench/README.md "The start-up collection's price"). Where Node has no
 * inspector, or it does not answer within 5 s, nothing is collected: a larger idle heap, not an
 * error.
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
 * How V8 collects for a server, whose objects live for a request (bench/README.md "Garbage under
 * load"):
 * - No allocation-site pretenuring. Start-up teaches V8 that the objects of some allocation sites
 *   live long (contexts, the runtime's own objects), so it allocates them in the old generation
 *   from then on; on a server those are a request's, garbage within milliseconds, and from the
 *   old generation they keep what they point to (a page's rows) alive through every young
 *   collection until a full one.
 * - The old generation may grow by half of what is live before the next full collection (V8's
 *   own factor reaches 4).
 * On the members page under the bench's load: 444 MB peak RSS and 1,176 µs of CPU a request with
 * neither; 406 MB and 1,080 µs with the first alone; 308 MB and 1,246 µs with both. Both, then:
 * a third less memory at the peak for 6% more CPU than V8's defaults.
 */
const SERVING = ["--no-allocation-site-pretenuring", "--heap-growing-percent=50"]

/** How V8 collects for serving (above), without collecting now. */
export const servingFlags = Effect.sync(() => {
  for (const flag of SERVING) setFlagsFromString(flag)
})

/** Once started: collect for serving, collect everything collectable and shrink the heap to what is live. */
export const settleMemory = Effect.andThen(servingFlags, lowMemoryCollection)
