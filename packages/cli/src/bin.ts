#!/usr/bin/env -S node --max-semi-space-size=32
/**
 * Entry point of the `chamber` command. Node keeps the compiled (and type-stripped) modules in its
 * compile cache (NODE_COMPILE_CACHE, else the system's temp directory): later starts skip that
 * work and the memory it takes (bench/README.md "Memory").
 *
 * The first line's Node option is the command's own: package managers' `chamber` shims and
 * `pnpm start` pass it to Node. It bounds the heap's young generation at 64 MB (two 32 MB
 * semi-spaces), the memory a server is sized for (docs/operations.md "Memory").
 */
import { enableCompileCache } from "node:module"
import { fail } from "./Output.ts"

enableCompileCache()
// A reader of stdout that goes away (`chamber export … | head`, `chamber changes --follow | head`)
// ends the command as SIGPIPE ends a Unix filter: at once, quietly, with status 141 (128 + 13).
// Any other failure to write it (a full disk) ends it with that said in one line, and status 1.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(141)
  fail(process.argv.includes("--json"), new Error(`Cannot write the output: ${error.message}`))
})
const { program } = await import("./program.ts")

await program().parseAsync(process.argv)
