import { assert, describe, it } from "@effect/vitest"
import { createHmac } from "node:crypto"
import type { OutboxEvent } from "@chamber/core"
import { deliveryBody, deliveryHeaders, sign, verify } from "../src/index.ts"

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

  it("frames the delivery body (id, type, created_at, data) and its headers (X-CC-Signature: hex HMAC-SHA256 of the raw body)", () => {
    const body = deliveryBody(event)
    assert.strictEqual(body, BODY)
    assert.deepStrictEqual(deliveryHeaders(event, secret, body), {
      "content-type": "application/json",
      "user-agent": "Chamber-Webhooks/1",
      "x-cc-event": "member.created",
      "x-cc-delivery": "evt_abc",
      "x-cc-signature": BODY_SIGNATURE
    })
  })

  it("verification accepts the receiver's signature and fails for a changed body, another secret or a malformed signature", () => {
    assert.isTrue(verify(secret, BODY, BODY_SIGNATURE))
    assert.isFalse(verify(secret, BODY.replace("Café", "Cafe"), BODY_SIGNATURE))
    assert.isFalse(verify(secret + "x", BODY, BODY_SIGNATURE))
    assert.isFalse(verify(secret, BODY, BODY_SIGNATURE.slice(0, 62)))
    assert.isFalse(verify(secret, BODY, "zz"))
  })
})
