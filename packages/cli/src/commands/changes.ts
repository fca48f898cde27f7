/**
 * `chamber changes` (docs/cli.md "Change feed"): a chamber's change feed as an admin reads it, every
 * kind, in commit order, 100 events a page after `--after`; `--follow` keeps polling the cursor
 * and printing what comes until Ctrl-C.
 */
import * as Effect from "effect/Effect"
import { type ChangeEvent, Changes, type ChangesPage, Tenants } from "@chamber/core"
import { jsonText } from "../Inert.ts"
import { dim, table } from "../Output.ts"
import { run } from "../Run.ts"

interface ChangesOptions {
  readonly json?: boolean
  readonly tenant: string
  readonly after?: string
  readonly types?: string
  readonly follow?: boolean
}

/** How long --follow waits before polling again when no more events wait. */
const FOLLOW_POLL_MS = 1_000

const eventRow = (e: ChangeEvent) => ({
  created_at: e.created_at,
  type: e.type,
  resource: (e.data as { readonly id?: unknown } | null)?.id ?? null,
  id: e.id
})

const COLUMNS = ["created_at", "type", "resource", "id"]

const human = (page: ChangesPage) =>
  [
    table(page.data.map(eventRow), COLUMNS),
    dim(`next cursor: ${page.meta.next_cursor}${page.meta.has_more ? " (more events wait: --after it)" : ""}`)
  ].join("\n")

/**
 * Each page's events as they come: one JSON line each with --json, else table rows without a
 * header after the first. Once the first page is read (`--after head` fixed to a position), a
 * line on stderr says so: every event committed from then on is printed.
 */
const follow = (opts: ChangesOptions) =>
  Effect.gen(function*() {
    const tenant = yield* (yield* Tenants).get(opts.tenant)
    const changes = yield* Changes
    let after = opts.after
    let header = true
    for (let first = true;; first = false) {
      const page = yield* changes.read(tenant.id, { after, types: opts.types })
      if (first) process.stderr.write(dim("Following the change feed (Ctrl-C to stop)") + "\n")
      if (page.data.length > 0) {
        const lines = opts.json === true
          ? page.data.map((e) => jsonText(e))
          : table(page.data.map(eventRow), COLUMNS).split("\n").slice(header ? 0 : 2)
        header = false
        process.stdout.write(lines.join("\n") + "\n")
      }
      after = page.meta.next_cursor
      if (!page.meta.has_more) yield* Effect.sleep(FOLLOW_POLL_MS)
    }
  })

export const changes = (opts: ChangesOptions) =>
  opts.follow === true
    ? run(opts, follow(opts), { json: () => undefined, human: () => "" })
    : run(opts, Effect.gen(function*() {
      const tenant = yield* (yield* Tenants).get(opts.tenant)
      return yield* (yield* Changes).read(tenant.id, { after: opts.after, types: opts.types })
    }), { json: (page) => page, human })
