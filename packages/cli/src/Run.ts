/** Runs a command's effect against the configured storage and prints its answer. */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { DatabaseFailures, DatabaseUnavailable } from "@chamber/core"
import { databaseConfigFromEnv, DatabaseFailuresSql, type DatabaseOptions, StorageLive } from "@chamber/pg-adapter"
import { inertValue, jsonText } from "./Inert.ts"
import { fail, printError, printJson } from "./Output.ts"

export type Services = Layer.Success<ReturnType<typeof StorageLive>>

/** The storage the environment names, read when the layer is built: a bad setting is the command's error. */
const storage = (options?: DatabaseOptions) => Layer.unwrap(Effect.sync(() => StorageLive(databaseConfigFromEnv(), options)))

/** The first failure, else the first defect, of a cause: the thing to report. */
export const causeError = (cause: Cause.Cause<unknown>): unknown => Cause.squash(cause)

/**
 * Runs a long-lived command (`serve`, `relay`, `listen`) until SIGINT or SIGTERM interrupts it:
 * a failure other than that interruption is printed (`explain` may reword it) and exits 1;
 * otherwise `stopped` says goodbye and gives the exit code (0 by default).
 */
export const runUntilStopped = <E>(
  program: Effect.Effect<unknown, E>,
  json: boolean,
  options: { readonly explain?: (error: unknown) => unknown; readonly stopped?: () => number } = {}
): void =>
  NodeRuntime.runMain(program, {
    disableErrorReporting: true,
    teardown: (exit, onExit) => {
      if (Exit.isFailure(exit) && !Cause.hasInterruptsOnly(exit.cause)) {
        const error = causeError(exit.cause)
        printError(json, options.explain === undefined ? error : options.explain(error))
        return onExit(1)
      }
      onExit(options.stopped?.() ?? 0)
    }
  })

/** A failure of the database that is an outage (pg-adapter DatabaseFailuresSql) as DatabaseUnavailable; any other cause as it is. */
const outagesNamed = <A, E>(self: Effect.Effect<A, E>): Effect.Effect<A, E | DatabaseUnavailable> =>
  Effect.catchCause(self, (cause) =>
    Effect.flatMap(DatabaseFailures, (failures): Effect.Effect<never, E | DatabaseUnavailable> => {
      const down = failures.unavailable(Cause.squash(cause))
      return down === undefined ? Effect.failCause(cause) : Effect.fail(down)
    })).pipe(Effect.provide(DatabaseFailuresSql))

/**
 * Runs `program` with the storage services; prints `json(result)` with --json, else `human(result)`
 * of the result with every string in it made inert (Inert.ts), so text from outside cannot act
 * on the terminal whatever the rendering does with it. The answer goes to stdout unless
 * `answerTo` says stderr (a command whose stdout is its data). SIGINT or SIGTERM interrupts it:
 * its finalizers run, then it says `render.interrupted` (else "Interrupted.") and exits 130. A
 * database that stops answering is said so ("The database does not answer: …"), followed by
 * `render.unavailable`, what that left of the command's work.
 */
export const run = async <A, E>(
  opts: { readonly json?: boolean },
  program: Effect.Effect<A, E, Services>,
  render: { readonly json: (a: A) => unknown; readonly human: (a: A) => string; readonly interrupted?: string; readonly unavailable?: string },
  storageOptions?: DatabaseOptions,
  answerTo: "stdout" | "stderr" = "stdout"
): Promise<void> => {
  const fiber = Effect.runFork(program.pipe(Effect.provide(storage(storageOptions)), Effect.scoped, outagesNamed))
  const interrupt = () => {
    if (opts.json !== true) process.stderr.write("Stopping…\n")
    Effect.runFork(Fiber.interrupt(fiber))
  }
  const signals = ["SIGINT", "SIGTERM"] as const
  for (const signal of signals) process.once(signal, interrupt)
  const exit = await Effect.runPromise(Fiber.await(fiber))
  for (const signal of signals) process.off(signal, interrupt)
  if (Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause)) {
    printError(opts.json === true, new Error(render.interrupted ?? "Interrupted."))
    process.exit(130)
  }
  if (Exit.isFailure(exit)) {
    const error = causeError(exit.cause)
    return fail(opts.json === true, error instanceof DatabaseUnavailable && render.unavailable !== undefined ? new Error(`${error.message}. ${render.unavailable}`) : error)
  }
  if (opts.json === true && answerTo === "stdout") printJson(render.json(exit.value))
  else if (opts.json === true) process.stderr.write(jsonText(render.json(exit.value)) + "\n")
  else process[answerTo].write(render.human(inertValue(exit.value)) + "\n")
}
