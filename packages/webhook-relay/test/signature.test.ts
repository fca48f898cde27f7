import { assert, describe, it } from "@effect/vitest"
import { createHmac } from "node:crypto"
import type { OutboxEvent } from "@chamber/core"
import { Webhook, WebhookVerificationError } from "standardwebhooks"
import {
  deliveryBody,
  deliveryHeaders,
  sign,
  signStandard,
  standardWebhooksKey,
  verify,
  verifyStandard
} from "../src/index.ts"

const event: OutboxEvent = {
  id: "evt_abc",
  tenant_id: 1,
  type: "member.created",
  created_at: "2026-11-22T10:00:00.000Z",
  data: { id: 7, attributes: { name: "Café Ünïcode" }, created_at: null, updated_at: null }
}
/** A webhook secret, `whsec_` + 44 base64 characters: the standard base64 of 32 bytes (here 0x00..0x1f). */
const secret = "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="

/** The delivery body of `event`, byte for byte (keys in order: id, type, created_at, data). */
const BODY =
  "{\"id\":\"evt_abc\",\"type\":\"member.created\",\"created_at\":\"2026-11-22T10:00:00.000Z\"," +
  "\"data\":{\"id\":7,\"attributes\":{\"name\":\"Café Ünïcode\"},\"created_at\":null,\"updated_at\":null}}"

/**
 * HMAC-SHA256 of BODY's UTF-8 bytes keyed with the whole secret string's UTF-8 bytes, lower-case
 * hex, computed once outside this code (Python's hmac module) and pasted. Keyed with the
 * base64-decoded bytes instead it would be 354547692a93…; over Latin-1 body bytes, 08b61b5b3f98….
 */
const BODY_SIGNATURE = "78d40da81bba587b599b52581801067482ed1b46c9a689529efab07c57bc2498"

/** An attempt made at 2026-11-22T10:01:30.250Z: `webhook-timestamp` is its Unix seconds, 1795341690. */
const ATTEMPT = new Date("2026-11-22T10:01:30.250Z")

/**
 * `webhook-signature` of that attempt: base64 HMAC-SHA256 of "evt_abc.1795341690." + BODY (UTF-8),
 * keyed with the base64-decoded bytes after `whsec_`, computed outside this code with Python
 * (hmac, hashlib, base64) and pasted. Keyed with the whole secret string instead it would be
 * IenwB2p1Y2zp….
 */
const STANDARD_SIGNATURE = "v1,nWjn1pojYyNGDDh1vV4v7EG31pLj4qgiOKj/HC2S7PA="

describe("delivery signing", () => {
  it("signs the exact raw body with the secret's UTF-8 bytes, as a receiver recomputes it", () => {
    const body = deliveryBody(event)
    const receiver = createHmac("sha256", Buffer.from(secret, "utf8")).update(Buffer.from(body, "utf8")).digest("hex")
    assert.strictEqual(sign(secret, body), receiver)
  })

  it("matches known answers: RFC 4231 test case 2 and a delivery signed with a whsec_ secret", () => {
    assert.strictEqual(
      sign("Jefe", "what do ya want for nothing?"),
      "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
    )
    assert.strictEqual(sign(secret, BODY), BODY_SIGNATURE)
  })

  it("frames the delivery body (id, type, created_at, data) and its headers, both signatures included", () => {
    const body = deliveryBody(event)
    assert.strictEqual(body, BODY)
    assert.deepStrictEqual(deliveryHeaders(event, secret, body, ATTEMPT), {
      "content-type": "application/json",
      "user-agent": "Chamber-Webhooks/1",
      "x-cc-event": "member.created",
      "x-cc-delivery": "evt_abc",
      "x-cc-signature": BODY_SIGNATURE,
      "webhook-id": "evt_abc",
      "webhook-timestamp": "1795341690",
      "webhook-signature": STANDARD_SIGNATURE
    })
  })

  it("signs the Standard Webhooks way: known answer, keyed with the decoded bytes after whsec_", () => {
    assert.strictEqual(signStandard(secret, "evt_abc", 1795341690, BODY), STANDARD_SIGNATURE)
    assert.deepStrictEqual([...standardWebhooksKey(secret)], Array.from({ length: 32 }, (_, i) => i))
    // A retry an hour later signs a new timestamp; X-CC-Signature and the ids do not change.
    const later = deliveryHeaders(event, secret, BODY, new Date(ATTEMPT.getTime() + 3_600_000))
    assert.strictEqual(later["webhook-timestamp"], "1795345290")
    assert.notStrictEqual(later["webhook-signature"], STANDARD_SIGNATURE)
    assert.strictEqual(later["x-cc-signature"], BODY_SIGNATURE)
    assert.strictEqual(later["webhook-id"], "evt_abc")
  })

  it("refuses a secret that is not whsec_ + standard base64", () => {
    assert.throws(() => standardWebhooksKey("whsec_"), /standard base64/)
    assert.throws(() => standardWebhooksKey("whsec_not base64!"), /standard base64/)
    assert.throws(() => standardWebhooksKey("whsec_AAECAwQ"), /standard base64/)
    assert.throws(() => standardWebhooksKey("whsec_AAEC-_Q="), /standard base64/)
  })

  it("a Standard Webhooks library (standardwebhooks) accepts our headers and rejects a tampered body", () => {
    const body = deliveryBody(event)
    const headers = deliveryHeaders(event, secret, body, new Date())
    const library = new Webhook(secret)
    assert.deepStrictEqual(library.verify(body, { ...headers }), JSON.parse(body))
    assert.throws(() => library.verify(body.replace("Café", "Cafe"), { ...headers }), WebhookVerificationError)
    assert.throws(() => library.verify(body, { ...headers, "webhook-id": "evt_other" }), WebhookVerificationError)
    assert.throws(
      () => new Webhook("whsec_" + Buffer.alloc(32, 9).toString("base64")).verify(body, { ...headers }),
      WebhookVerificationError
    )
  })

  it("verifyStandard accepts the library's own signature and any matching one of several, and nothing else", () => {
    const library = new Webhook(secret)
    const timestamp = new Date("2026-11-22T10:01:30Z")
    const theirs = library.sign("evt_abc", timestamp, BODY)
    assert.strictEqual(theirs, STANDARD_SIGNATURE)
    assert.isTrue(verifyStandard(secret, "evt_abc", "1795341690", BODY, STANDARD_SIGNATURE))
    assert.isTrue(verifyStandard(secret, "evt_abc", "1795341690", BODY, `v1,AAAA ${STANDARD_SIGNATURE}`))
    assert.isFalse(verifyStandard(secret, "evt_abc", "1795341691", BODY, STANDARD_SIGNATURE))
    assert.isFalse(verifyStandard(secret, "evt_abd", "1795341690", BODY, STANDARD_SIGNATURE))
    assert.isFalse(verifyStandard(secret, "evt_abc", "1795341690", BODY + " ", STANDARD_SIGNATURE))
    assert.isFalse(verifyStandard(secret, "evt_abc", "1795341690", BODY, STANDARD_SIGNATURE.replace("v1,", "v2,")))
    assert.isFalse(verifyStandard(secret, "evt_abc", "nope", BODY, STANDARD_SIGNATURE))
  })

  it("verification accepts the receiver's signature and fails for a changed body, another secret or a malformed signature", () => {
    assert.isTrue(verify(secret, BODY, BODY_SIGNATURE))
    assert.isFalse(verify(secret, BODY.replace("Café", "Cafe"), BODY_SIGNATURE))
    assert.isFalse(verify(secret + "x", BODY, BODY_SIGNATURE))
    assert.isFalse(verify(secret, BODY, BODY_SIGNATURE.slice(0, 62)))
    assert.isFalse(verify(secret, BODY, "zz"))
  })
})
