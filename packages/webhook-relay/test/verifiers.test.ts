import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { spawn, spawnSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import type { OutboxEvent } from "@chamber/core"
import { closeSenders, deliveryBody, deliveryHeaders, send, signStandard } from "../src/index.ts"
import { type ReceivedRequest, type Receiver, startReceiver } from "./receiver.ts"

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url))
const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw5dL4Y6sZtQ0="
const event: OutboxEvent = {
  id: "evt_verifiers",
  tenant_id: 1,
  type: "invoice.paid",
  created_at: "2026-11-22T10:00:00.000Z",
  data: { id: 41, attributes: { number: "INV-0041", memo: "Zoë's café — ✓" }, created_at: null, updated_at: null }
}

/** Runs a verifier: argv secret and headers JSON, the raw body on stdin. */
const run = (command: string, args: ReadonlyArray<string>, stdin: Buffer) =>
  new Promise<{ readonly code: number | null; readonly stdout: string }>((resolve, reject) => {
    const child = spawn(command, [...args], { stdio: ["pipe", "pipe", "inherit"] })
    let stdout = ""
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString("utf8")))
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, stdout: stdout.trim() }))
    child.stdin.end(stdin)
  })

const hasPython = spawnSync("python3", ["--version"]).status === 0
if (!hasPython) console.warn("verifiers.test.ts: python3 is not installed, so verify.py is not run (its tests are skipped).")

const verifiers = [
  { name: "verify.mjs (node:crypto)", command: process.execPath, file: "verifiers/verify.mjs", available: true, library: false },
  { name: "verify-library.mjs (standardwebhooks)", command: process.execPath, file: "verifiers/verify-library.mjs", available: true, library: true },
  { name: "verify.py (hmac, hashlib, base64)", command: "python3", file: "verifiers/verify.py", available: hasPython, library: false }
] as const

let receiver: Receiver
/** A real delivery as the receiver got it: signed now, sent over HTTPS. */
let delivered: ReceivedRequest
let headersJson: string

beforeAll(async () => {
  receiver = await startReceiver()
  const body = deliveryBody(event)
  const result = await send({
    url: `${receiver.url}/webhooks`,
    headers: { ...deliveryHeaders(event, secret, body, new Date()) },
    body,
    timeoutMs: 5000,
    allowPrivate: true,
    ca: receiver.ca
  })
  assert.isTrue(result.ok, result.error ?? "")
  delivered = receiver.requests[0]!
  headersJson = JSON.stringify(delivered.headers)
})
afterAll(async () => {
  closeSenders()
  await receiver.close()
})

describe("the documented verifiers, run against a real signed delivery", () => {
  for (const v of verifiers) {
    const title = v.available ? v.name : `${v.name} (skipped: python3 is not installed)`
    it.skipIf(!v.available)(`${title}: accepts it, refuses a changed body, another secret, another signature`, async () => {
      const verifier = here(v.file)
      const accepted = await run(v.command, [verifier, secret, headersJson], delivered.body)
      assert.deepStrictEqual(accepted.code, 0, accepted.stdout)
      assert.strictEqual(accepted.stdout, v.library ? "verified evt_verifiers invoice.paid" : "verified")

      const changed = Buffer.from(delivered.body)
      changed[changed.length - 2] = "]".charCodeAt(0)
      const tampered = await run(v.command, [verifier, secret, headersJson], changed)
      assert.strictEqual(tampered.code, 1)
      assert.strictEqual(tampered.stdout, v.library ? "No matching signature found" : "X-CC-Signature does not match")

      const otherSecret = "whsec_" + Buffer.alloc(32, 7).toString("base64")
      const wrongKey = await run(v.command, [verifier, otherSecret, headersJson], delivered.body)
      assert.strictEqual(wrongKey.code, 1)

      // X-CC-Signature still right, webhook-signature of another id: the second check alone refuses it.
      const timestamp = String(delivered.headers["webhook-timestamp"])
      const forged = JSON.stringify({
        ...delivered.headers,
        "webhook-signature": signStandard(secret, "evt_other", Number(timestamp), delivered.body.toString("utf8"))
      })
      const refused = await run(v.command, [verifier, secret, forged], delivered.body)
      assert.strictEqual(refused.code, 1)
      assert.strictEqual(refused.stdout, v.library ? "No matching signature found" : "webhook-signature does not match")

      // A delivery signed an hour ago, replayed now, is refused for its timestamp.
      const old = new Date(Date.now() - 3_600_000)
      const stale = JSON.stringify({ ...delivered.headers, ...deliveryHeaders(event, secret, delivered.body.toString("utf8"), old) })
      const replayed = await run(v.command, [verifier, secret, stale], delivered.body)
      assert.strictEqual(replayed.code, 1)
      assert.strictEqual(replayed.stdout, v.library ? "Message timestamp too old" : "webhook-timestamp is missing or too far from now")
    })
  }

  it("docs/webhooks.md shows each verifier verbatim", () => {
    const readme = readFileSync(here("../../../docs/webhooks.md"), "utf8")
    for (const [file, language] of [["verifiers/verify.mjs", "js"], ["verifiers/verify.py", "python"], ["verifiers/verify-library.mjs", "js"]]) {
      const source = readFileSync(here(file!), "utf8")
      assert.include(readme, "```" + language + "\n" + source + "```\n", `${file} is not in docs/webhooks.md as it is`)
    }
  })
})
