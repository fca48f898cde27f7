/**
 * What `chamber serve` loads (bench/README.md "Memory"): the product's modules import each
 * Effect module they use by its own path. A barrel (`effect`, `effect/http`, `@effect/platform-node`
 * and the like) evaluates every module it re-exports, tens of megabytes of a server's memory.
 */
import { assert, describe, it } from "@effect/vitest"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const packages = fileURLToPath(new URL("../../", import.meta.url))
const BARREL = /from\s+"(effect|effect\/(http|http-api|sql|unstable\/[a-z-]+)|@effect\/platform-node(-shared)?)"/

const sources = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sources(join(dir, entry.name)) : /\.tsx?$/.test(entry.name) ? [join(dir, entry.name)] : []
  )

describe("the product's imports", () => {
  it("no module of a package's src imports a barrel (the embedding example excepted: it shows what an embedder writes)", () => {
    const offending = readdirSync(packages)
      .filter((name) => name !== "embedding-example")
      .flatMap((name) => {
        try {
          return sources(join(packages, name, "src"))
        } catch {
          return []
        }
      })
      .flatMap((file) =>
        readFileSync(file, "utf8").split("\n").flatMap((line, i) => (BARREL.test(line) ? [`${file.slice(packages.length)}:${i + 1}: ${line.trim()}`] : []))
      )
    assert.deepStrictEqual(offending, [])
  })
})
