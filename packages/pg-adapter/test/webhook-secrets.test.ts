/**
 * Webhook secrets at rest (docs/webhooks.md "Secrets", ruling 23): the Standard Webhooks form,
 * sealed with CHAMBER_SECRET_KEY when it is set and opened again by a later process with the same
 * key, never by another key; stored in the clear without one, and still read once a key is set.
 */
import { assert, describe, it } from "@effect/vitest"
import { SecretKeyMismatch, webhookSecrets } from "../src/index.ts"

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

  it("with a key: sealed (the stored form does not hold it), opened by any process with that key, not by another", () => {
    const secret = webhookSecrets(undefined).generate()
    const stored = webhookSecrets("the operator's key").seal(secret)
    assert.match(stored, /^v1:/)
    assert.notInclude(stored, secret.slice(6, 20))
    assert.notStrictEqual(webhookSecrets("the operator's key").seal(secret), stored, "a fresh IV each time")
    // A restart: a new instance with the same key reads it.
    assert.strictEqual(webhookSecrets("the operator's key").open(stored), secret)
    assert.throws(() => webhookSecrets("another key").open(stored), SecretKeyMismatch)
    assert.throws(() => webhookSecrets(undefined).open(stored), SecretKeyMismatch)
    const tampered = `v1:${Buffer.from(Buffer.from(stored.slice(3), "base64").map((b, i) => (i === 40 ? b ^ 1 : b))).toString("base64")}`
    assert.throws(() => webhookSecrets("the operator's key").open(tampered), SecretKeyMismatch)
  })

  it("without a key: stored as it is, and still read once a key is set", () => {
    const secret = webhookSecrets(undefined).generate()
    const stored = webhookSecrets(undefined).seal(secret)
    assert.strictEqual(stored, `plain:${secret}`)
    assert.strictEqual(webhookSecrets(undefined).open(stored), secret)
    assert.strictEqual(webhookSecrets("a key set later").open(stored), secret)
  })
})
