#!/usr/bin/env node
/**
 * Entry point of the `chamber` command. Node keeps the compiled (and type-stripped) modules in its
 * compile cache (NODE_COMPILE_CACHE, else the system's temp directory): later starts skip that
 * work and the memory it takes (bench/README.md "Idle memory").
 */
import { enableCompileCache } from "node:module"

enableCompileCache()
const { program } = await import("./program.ts")

await program().parseAsync(process.argv)
