/**
 * The V8 flags a process sets once it has started and is about to serve (docs/operations.md
 * "Memory"): how it collects, and how soon it optimizes. Set after start-up, so
 * loading, migrating and seeding run with V8's defaults. Flags V8 reads only when the process
 * starts are the `chamber` command's own (bin.ts's first line).
 */
import * as Effect from "effect/Effect"
import { setFlagsFromString } from "node:v8"

/**
 * Collection: how V8 collects for a server, whose objects live for a request (bench/README.md
 * "Garbage under load"):
 * - No allocation-site pretenuring. Start-up teaches V8 that the objects of some allocation sites
 *   live long (contexts, the runtime's own objects), so it allocates them in the old generation
 *   from then on; on a server those are a request's, garbage within milliseconds, and from the
 *   old generation they keep what they point to (a page's rows) alive through every young
 *   collection until a full one.
 * - The old generation may grow by twice what is live (to three times it) before the next full
 *   collection. A full collection moves every young object alive at that moment (the pages in
 *   flight) into the old generation, so a small allowance brings the next one soon after: with
 *   half, as before, the members page ran 2.4 full collections a 1,000 requests and promoted
 *   48 KB a request, against the baseline's 0.2 and 2 KB.
 * The young generation itself is capped where the process starts, by `--max-semi-space-size` in
 * the `chamber` command's own Node flags (bin.ts), since the flag cannot be changed once the heap
 * is set up: at 64 MB instead of the 128 MB V8 grows it to under load.
 * Measured together on the members page (`pnpm bench`, bench/README.md "What the collection
 * changed, and V8's settings measured anew"): CPU a request 1.09x the baseline's and peak RSS
 * 1.30x, against 1.57x and 1.37x with half and no cap; a 32 MB cap cost the page 12% more CPU for
 * its scavenges.
 */
const COLLECTION = ["--no-allocation-site-pretenuring", "--heap-growing-percent=200"]

/**
 * Compilation: how soon V8 optimizes a function with its top compiler, TurboFan (bench/README.md
 * "How soon the code is optimized (a seventh session)"). With V8's default a small function runs
 * some 24,000 times before TurboFan compiles it, in Maglev's slower code meanwhile: a function a
 * write request calls once waits that many requests, a minute or more of a busy server. At a
 * third of the default count it takes some 3,400 calls (cli/test/serving-flags.test.ts): the
 * invoice flow's first 4,000 flows spend 6 to 17% less CPU, and GET /me, once warm, runs as many
 * instructions as before.
 */
const TIERING = ["--invocation-count-for-turbofan=1000"]

/** Sets the serving flags (above), without collecting now. */
export const setServingFlags = (): void => {
  for (const flag of [...COLLECTION, ...TIERING]) setFlagsFromString(flag)
}

/** `setServingFlags` as an effect. */
export const servingFlags = Effect.sync(setServingFlags)
