/** Runs a command's effect against the configured storage and prints its answer. */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import { databaseConfigFromEnv, type DatabaseOptions, StorageLive } from "@chamber/pg-adapter"
import { inertValue, jsonText } from "./Inert.ts"
import { fail, printJson } from "./Output.ts"

export type Services = Layer.Success<ReturnType<typeof StorageLive>>

/** The storage the environment names, read when the layer is built: a bad setting is the command's error. */
const storage = (options?: DatabaseOptions) => Layer.unwrap(Effect.sync(() => StorageLive(databaseConfigFromEnv(), options)))

/** The first failure, else the first defect, of a cause: the thing to report. */
export const causeError = (cause: Cause.Cause<unknown>): unknown => Cause.squash(cause)

/**
 * Runs `program` with the storage services; prints `json(result)` with --json, else `human(result)`
 * of the result with every string in it made inert (Inert.ts), so text from outside cannot act
 * on the terminal whatever the rendering does with it. The answer goes to stdout unless
 * `answerTo` says stderr (a command whose stdout is its data).
 */
export const run = async <A, E>(
  opts: { readonly json?: boolean },
  program: Effect.Effect<A, E, Services>,
  render: { readonly json: (a: A) => unknown; readonly human: (a: A) => string },
  storageOptions?: DatabaseOptions,
  answerTo: "stdout" | "stderr" = "stdout"
): Promise<void> => {
  const exit = await Effect.runPromiseExit(program.pipe(Effect.provide(storage(storageOptions)), Effect.scoped))
  if (Exit.isFailure(exit)) return fail(opts.json === true, causeError(exit.cause))
  if (opts.json === true && answerTo === "stdout") printJson(render.json(exit.value))
  else if (opts.json === true) process.stderr.write(jsonText(render.json(exit.value)) + "\n")
  else process[answerTo].write(render.human(inertValue(exit.value)) + "\n")
}
