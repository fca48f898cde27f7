/** Runs a command's effect against the configured storage and prints its answer. */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import { databaseConfigFromEnv, type DatabaseOptions, StorageLive } from "@chamber/pg-adapter"
import { inertValue } from "./Inert.ts"
import { fail, printJson } from "./Output.ts"

export type Services = Layer.Success<ReturnType<typeof StorageLive>>

/** The storage the environment names, read when the layer is built: a bad setting is the command's error. */
const storage = (options?: DatabaseOptions) => Layer.unwrap(Effect.sync(() => StorageLive(databaseConfigFromEnv(), options)))

/** The first failure, else the first defect, of a cause: the thing to report. */
export const causeError = (cause: Cause.Cause<unknown>): unknown => Cause.squash(cause)

/**
 * Runs `program` with the storage services; prints `json(result)` with --json, else `human(result)`
 * of the result with every string in it made inert (Inert.ts), so text from outside cannot act
 * on the terminal whatever the rendering does with it.
 */
export const run = async <A, E>(
  opts: { readonly json?: boolean },
  program: Effect.Effect<A, E, Services>,
  render: { readonly json: (a: A) => unknown; readonly human: (a: A) => string },
  storageOptions?: DatabaseOptions
): Promise<void> => {
  const exit = await Effect.runPromiseExit(program.pipe(Effect.provide(storage(storageOptions)), Effect.scoped))
  if (Exit.isFailure(exit)) return fail(opts.json === true, causeError(exit.cause))
  if (opts.json === true) printJson(render.json(exit.value))
  else process.stdout.write(render.human(inertValue(exit.value)) + "\n")
}
