/**
 * `chamber tenant delete ID --confirm NAME [--dry-run] [--batch-size N]` (docs/cli.md "Deleting a
 * chamber"): the core removal with progress on stderr, then the counts Redis keeps of the
 * chamber's keys when REDIS_URL is set.
 */
import * as Effect from "effect/Effect"
import { DEFAULT_REMOVAL_BATCH, MAX_REMOVAL_BATCH, type RemovalResult, TenantRemoval } from "@chamber/core"
import { bold, dim, fail, green, yellow } from "../Output.ts"
import { removalProgress } from "../RemovalProgress.ts"
import { run } from "../Run.ts"

export interface TenantDeleteOptions {
  readonly json?: boolean
  readonly confirm: string
  readonly dryRun?: boolean
  readonly batchSize?: string
}

/** What happened to the counts Redis keeps of the chamber's keys: none kept there, found (or removed), or Redis away. */
type RedisOutcome = { readonly kind: "none" } | { readonly kind: "counted"; readonly keys: number } | { readonly kind: "away"; readonly reason: string }

const count = (n: number) => n.toLocaleString("en-US")
const plural = (n: number, one: string, many: string) => `${count(n)} ${n === 1 ? one : many}`

const redisCounts = (chamberId: string, remove: boolean) => {
  const url = process.env.REDIS_URL
  if (url === undefined || url === "") return Effect.succeed<RedisOutcome>({ kind: "none" })
  return Effect.promise(() => import("@chamber/redis-adapter")).pipe(
    Effect.flatMap(({ chamberCounts }) => chamberCounts(url, chamberId, { remove })),
    Effect.map((keys): RedisOutcome => ({ kind: "counted", keys })),
    Effect.catch((error) => Effect.succeed<RedisOutcome>({ kind: "away", reason: error.message }))
  )
}

const rowsOf = (result: RemovalResult) => Object.values(result.counts).reduce((a, b) => a + b, 0)

/** `160 members, 60 contacts, …`: the tables with rows, most first. */
const breakdown = (result: RemovalResult) =>
  Object.entries(result.counts).filter(([, n]) => n > 0).sort((a, b) => b[1] - a[1]).map(([t, n]) => `${count(n)} ${t}`).join(", ")

export const tenantDelete = (id: string, opts: TenantDeleteOptions) => {
  const json = opts.json === true
  const batchText = opts.batchSize ?? String(DEFAULT_REMOVAL_BATCH)
  const batchSize = /^\d+$/.test(batchText.trim()) ? Number(batchText) : NaN
  if (!(batchSize >= 1 && batchSize <= MAX_REMOVAL_BATCH)) {
    return fail(json, new Error(`--batch-size must be a whole number from 1 to ${MAX_REMOVAL_BATCH}, not "${batchText}".`))
  }
  const started = Date.now()
  const shown = json || opts.dryRun === true ? undefined : removalProgress(process.stderr, process.stderr.isTTY === true)
  return run(
    opts,
    Effect.gen(function*() {
      const removal = yield* TenantRemoval
      const result = yield* removal.remove(id, {
        confirm: opts.confirm,
        dryRun: opts.dryRun === true,
        batchSize,
        progress: shown === undefined ? undefined : (event) => shown.tell(event),
        begun: json ? undefined : ({ keys_revoked, resumed, subscriptions_stopped }) =>
          process.stderr.write(
            `${resumed ? "Resuming the deletion: " : ""}${plural(keys_revoked, "key", "keys")} revoked, ` +
              `${plural(subscriptions_stopped, "webhook subscription", "webhook subscriptions")} deactivated; removing the chamber's rows.\n`
          )
      })
      const redis = yield* redisCounts(result.tenant.public_id, !result.dryRun)
      return { result, redis }
    }).pipe(Effect.ensuring(Effect.sync(() => shown?.end()))),
    {
      // The chamber stays marked being deleted, its keys revoked: the same command resumes (docs/cli.md "Deleting a chamber").
      interrupted: opts.dryRun === true ? undefined : "Interrupted: run the same command again to finish the deletion.",
      unavailable: opts.dryRun === true ? "Nothing was changed (--dry-run)." : "Run the same command again once it answers: it resumes where it stopped.",
      json: ({ redis, result }) => ({
        id: result.tenant.public_id,
        name: result.tenant.name,
        dry_run: result.dryRun,
        ...(result.dryRun ? {} : {
          deleted: true,
          resumed: result.resumed,
          keys_revoked: result.keysRevoked,
          subscriptions_deactivated: result.subscriptionsStopped,
          seconds: Math.round((Date.now() - started) / 100) / 10
        }),
        counts: result.counts,
        rows: rowsOf(result),
        redis_keys: redis.kind === "counted" ? redis.keys : null,
        ...(redis.kind === "away" ? { redis_error: redis.reason } : {})
      }),
      human: ({ redis, result }) => {
        const who = `${bold(JSON.stringify(result.tenant.name))} ${dim(result.tenant.public_id)}`
        const rows = `${plural(rowsOf(result), "row", "rows")} (${breakdown(result)})`
        const inRedis = redis.kind === "counted" ? `; ${plural(redis.keys, "Redis key", "Redis keys")} of rate-limit counts` : ""
        const lines = result.dryRun
          ? [`Would delete ${who}: ${rows}${inRedis}.`, "Nothing was changed (--dry-run)."]
          : [`${green("Deleted")} ${who}: ${rows}${inRedis} ${dim(`in ${((Date.now() - started) / 1000).toFixed(1)} s`)}.`]
        if (redis.kind === "away") {
          lines.push(yellow(`${redis.reason}: its rate-limit counts there ${result.dryRun ? "were not counted" : "were not removed"}; they expire by themselves a day after each key's last request.`))
        }
        return lines.join("\n")
      }
    }
  )
}
