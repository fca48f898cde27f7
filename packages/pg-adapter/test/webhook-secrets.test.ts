/**
 * Webhook secrets at rest (docs/webhooks.md "Secrets", ruling 23): the Standard Webhooks form,
 * sealed with CHAMBER_SECRET_KEY when it is set and opened again by a later process with the same
 * key (or with it as CHAMBER_SECRET_KEY_PREVIOUS), never by another key; stored in the clear
 * without one, and still read once a key is set. What cannot be opened says why: no key, another
 * key, or damaged.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Result from "effect/Result"
import { createCipheriv, createHash, randomBytes } from "node:crypto"
import { isSealedWith, surveySecrets, webhookSecrets } from "../src/index.ts"

const opened = (r: ReturnType<ReturnType<typeof webhookSecrets>["open"]>) => Result.getOrThrow(r)
const why = (r: ReturnType<ReturnType<typeof webhookSecrets>["open"]>) => Result.isFailure(r) ? r.failure.reason : "opened"

/** One bit of the ciphertext's body flipped (the key id kept). */
const tamper = (stored: string) => {
  const at = stored.lastIndexOf(":") + 1
  const raw = Buffer.from(stored.slice(at), "base64")
  raw[raw.length - 1] = raw[raw.length - 1]! ^ 1
  return stored.slice(0, at) + raw.toString("base64")
}

/** The form sealed secrets had before they named their key: `v1:` + base64 of iv, tag and ciphertext. */
const sealV1 = (key: string, secret: string) => {
  const iv = randomBytes(12)
  const cipher = createCipheriv("aes-256-gcm", createHash("sha256").update(key, "utf8").digest(), iv)
  const body = Buffer.concat([cipher.update(secret, "utf8"), cipher.final()])
  return `v1:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64")}`
}

describe("webhook secrets", () => {
  it("are whsec_ + 32 random bytes in base64, 50 characters", () => {
    const secrets = webhookSecrets(undefined)
    const made = new Set(Array.from({ length: 50 }, () => secrets.generate()))
    assert.strictEqual(made.size, 50)
    for (const s of made) {
      assert.match(s, /^whsec_[A-Za-z0-9+/]{43}=$/)
      assert.strictEqual(Buffer.from(s.slice(6), "base64").length, 32)
    }
  })

  it("with a key: sealed (the stored form does not hold it), opened by any process with that key; another key, none or a flipped bit say so", () => {
    const secret = webhookSecrets(undefined).generate()
    const stored = webhookSecrets("the operator's key").seal(secret)
    assert.match(stored, /^v2:[0-9a-f]{8}:/)
    assert.notInclude(stored, secret.slice(6, 20))
    assert.notStrictEqual(webhookSecrets("the operator's key").seal(secret), stored, "a fresh IV each time")
    // A restart: a new instance with the same key reads it.
    assert.strictEqual(opened(webhookSecrets("the operator's key").open(stored)), secret)
    assert.strictEqual(why(webhookSecrets("another key").open(stored)), "other-key")
    assert.strictEqual(why(webhookSecrets(undefined).open(stored)), "no-key")
    assert.strictEqual(why(webhookSecrets("the operator's key").open(tamper(stored))), "damaged")
    assert.strictEqual(why(webhookSecrets("the operator's key").open("v2:00")), "damaged")
    const refused = webhookSecrets("another key").open(stored)
    assert.match(Result.isFailure(refused) ? refused.failure.message : "", /encrypted with another key than CHAMBER_SECRET_KEY/)
  })

  it("during a rotation: sealed with CHAMBER_SECRET_KEY, opened with it or CHAMBER_SECRET_KEY_PREVIOUS", () => {
    const secret = webhookSecrets(undefined).generate()
    const old = webhookSecrets("old key").seal(secret)
    const rotating = webhookSecrets({ current: "new key", previous: "old key" })
    assert.strictEqual(opened(rotating.open(old)), secret)
    const resealed = rotating.seal(secret)
    assert.isTrue(isSealedWith(resealed, "new key"))
    assert.isFalse(isSealedWith(old, "new key"))
    assert.strictEqual(opened(webhookSecrets("new key").open(resealed)), secret)
    assert.strictEqual(why(webhookSecrets("new key").open(old)), "other-key")
    // The previous key alone opens, and seals nothing.
    assert.strictEqual(opened(webhookSecrets({ previous: "old key" }).open(old)), secret)
  })

  it("v1 secrets (no key id) are still opened by either key; one no key opens cannot be told from a damaged one", () => {
    const secret = webhookSecrets(undefined).generate()
    const v1 = sealV1("old key", secret)
    assert.strictEqual(opened(webhookSecrets("old key").open(v1)), secret)
    assert.strictEqual(opened(webhookSecrets({ current: "new key", previous: "old key" }).open(v1)), secret)
    assert.strictEqual(why(webhookSecrets("new key").open(v1)), "undecryptable")
    assert.strictEqual(why(webhookSecrets(undefined).open(v1)), "no-key")
  })

  it("without a key: stored as it is, and still read once a key is set", () => {
    const secret = webhookSecrets(undefined).generate()
    const stored = webhookSecrets(undefined).seal(secret)
    assert.strictEqual(stored, `plain:${secret}`)
    assert.strictEqual(opened(webhookSecrets(undefined).open(stored)), secret)
    assert.strictEqual(opened(webhookSecrets("a key set later").open(stored)), secret)
  })

  it("a survey tells a wrong or missing key (every secret of another key) from a damaged secret (its key at hand)", () => {
    const a = webhookSecrets("key a")
    const secret = a.generate()
    const rows = [
      { id: 1, secret: a.seal(secret) },
      { id: 2, secret: tamper(a.seal(secret)) },
      { id: 3, secret: webhookSecrets("key b").seal(secret) },
      { id: 4, secret: `plain:${secret}` }
    ]
    const withA = surveySecrets(a, rows)
    assert.deepStrictEqual([[...withA.opened.keys()], withA.foreign, withA.damaged, withA.keySet], [[1, 4], [3], [2], true])
    const none = surveySecrets(webhookSecrets(undefined), rows)
    assert.deepStrictEqual([none.foreign, none.keySet], [[1, 2, 3], false])
    // v1: wrong when no v1 secret opens, damaged when another does.
    const v1 = [{ id: 5, secret: sealV1("key a", secret) }, { id: 6, secret: tamper(sealV1("key a", secret)) }]
    assert.deepStrictEqual([surveySecrets(a, v1).foreign, surveySecrets(a, v1).damaged], [[], [6]])
    assert.deepStrictEqual([surveySecrets(webhookSecrets("key b"), v1).foreign, surveySecrets(webhookSecrets("key b"), v1).damaged], [[5, 6], []])
  })
})
