/**
 * `chamber export` round trip of a large chamber (docs/cli.md "Export"), on PostgreSQL: a
 * generated chamber of 100,000 members holding every collection and every state the export
 * test's generated chamber holds, exported, imported into a new chamber and exported again, gives the same document but for
 * ids. The two files are compared a record at a time, never held whole.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { postgresOnly } from "@chamber/pg-adapter/testing"
import { changedThroughTheApi, everyState, generated, generatedCounts, sameButForIds, STATES_IN_FIRST } from "./exportDocs.ts"
import { chamber, chambers, envLayer, json } from "./harness.ts"
import { suiteDir } from "./tempDirs.ts"

const dir = suiteDir("export-large")
const MEMBERS = 100_000

for (const rt of postgresOnly("chamber export of 100,000 members")) {
  describe(`chamber export of 100,000 members on ${rt.name}`, () => {
    layer(envLayer(rt), { timeout: 600_000 })((it) => {
      it.effect("exported, imported into a new chamber and exported again: the same document but for ids", () =>
        Effect.gen(function*() {
          const [source, copy] = (yield* chambers([
            ["tenant", "create", "--name", "Large", "--admin", "ann@large.example", "--json"],
            ["tenant", "create", "--name", "Large Copy", "--json"]
          ])).map((r) => json(r).id as string)
          const input = join(dir, "input.json")
          writeFileSync(input, JSON.stringify(generated(MEMBERS)))
          const ids = json(yield* chamber(["import", "--tenant", source!, input, "--json"])).ids as Record<string, number>
          yield* changedThroughTheApi(source!, "ann@large.example", ids)

          const [first, second] = [join(dir, "first.json"), join(dir, "second.json")]
          const exported = json(yield* chamber(["export", "--tenant", source!, "--out", first, "--json"]))
          const counts = Object.fromEntries(Object.entries(exported.counts as Record<string, number>).filter(([, n]) => n !== 0))
          assert.deepStrictEqual(counts, generatedCounts(MEMBERS))
          json(yield* chamber(["import", "--tenant", copy!, first, "--json"]))
          json(yield* chamber(["export", "--tenant", copy!, "--out", second, "--json"]))

          // Side by side a record at a time; of the first document only what shows each state is kept.
          const compared = yield* Effect.promise(() =>
            sameButForIds(first, second, (collection, index, record) =>
              (collection !== "members" && collection !== "contacts") || index < STATES_IN_FIRST || record.email === "reader@example.com")
          )
          assert.deepStrictEqual(compared.counts, counts)
          everyState(compared.kept)
        }), 600_000)
    })
  })
}
