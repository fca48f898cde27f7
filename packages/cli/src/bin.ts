#!/usr/bin/env node
/** Entry point of the `chamber` command. */
import { program } from "./program.ts"

await program().parseAsync(process.argv)
