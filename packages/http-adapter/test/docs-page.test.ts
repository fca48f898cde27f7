/**
 * The reference page at /docs as a person sees it (docs/api.md "Documentation"), in headless
 * Chromium whose network reaches 127.0.0.1 only: it renders offline, with no request that fails or
 * leaves this server and no blocked resource; its example requests carry `Authorization: Bearer`
 * (the bearer key preselected); and it shows none of the viewer vendor's own tools or links, nor
 * any text pointing at a file a browser cannot open. Skipped, saying so, where Chromium is absent
 * (`apt-get install -y chromium`).
 */
import { assert, describe, it as plain, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { existsSync } from "node:fs"
import { chromium } from "playwright-core"
import { pgliteRuntime } from "@chamber/pg-adapter/testing"
import { serverOn, serverUrl } from "./fixture.ts"

const CHROMIUM = "/usr/bin/chromium"

/** What the page did and showed. */
interface Visit {
  readonly outside: ReadonlyArray<string>
  readonly failed: ReadonlyArray<string>
  readonly problems: ReadonlyArray<string>
  readonly examples: ReadonlyArray<string>
  readonly text: string
}

const visit = (base: string): Promise<Visit> =>
  (async () => {
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        // No name resolves but the server's address: nothing could leave this machine.
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"
      ]
    })
    try {
      const page = await browser.newPage()
      const outside: Array<string> = []
      const failed: Array<string> = []
      const problems: Array<string> = []
      await page.route("**/*", (route) => {
        const url = route.request().url()
        if (url.startsWith(`${base}/`)) return route.continue()
        outside.push(url)
        return route.abort()
      })
      page.on("requestfailed", (request) => failed.push(`${request.url()}: ${request.failure()?.errorText}`))
      page.on("response", (response) => {
        if (response.status() >= 400) failed.push(`${response.url()}: ${response.status()}`)
      })
      // A resource the Content-Security-Policy blocks is reported here, not as a request.
      page.on("console", (message) => {
        if (message.type() === "error") problems.push(message.text())
      })
      page.on("pageerror", (error) => problems.push(error.message))
      await page.goto(`${base}/docs`, { waitUntil: "networkidle" })
      await page.locator("pre", { hasText: "curl" }).first().waitFor({ timeout: 30_000 })
      const examples = await page.locator("pre", { hasText: "curl" }).allInnerTexts()
      const text = await page.locator("body").innerText()
      return { outside, failed, problems, examples, text }
    } finally {
      await browser.close()
    }
  })()

if (!existsSync(CHROMIUM)) {
  console.warn(`docs-page.test.ts: SKIPPED, no Chromium at ${CHROMIUM} (install it with: apt-get install -y chromium)`)
  describe.skip("the /docs page in headless Chromium", () => {
    plain.skip(`skipped: no Chromium at ${CHROMIUM}; apt-get install -y chromium to run it`, () => {})
  })
} else {
  layer(serverOn(pgliteRuntime), { timeout: 120_000, excludeTestServices: true })((it) => {
    it.effect("/docs renders offline with the bearer key preselected and nothing of the viewer's vendor", () =>
      Effect.gen(function*() {
        const base = yield* serverUrl
        const seen = yield* Effect.promise(() => visit(base))
        assert.deepStrictEqual(seen.outside, [], "requests to another host")
        assert.deepStrictEqual(seen.failed, [], "failed requests")
        assert.deepStrictEqual(seen.problems, [], "errors on the page")
        assert.isNotEmpty(seen.examples)
        for (const example of seen.examples) assert.include(example, "Authorization: Bearer", example)
        for (const vendor of ["Generate SDKs", "Share", "Developer Tools", "Powered by", "No authentication selected"]) {
          assert.notInclude(seen.text, vendor)
        }
        assert.notMatch(seen.text, /[\w/-]+\.md\b/)
      }), 90_000)
  })
}
