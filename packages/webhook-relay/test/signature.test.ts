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
const secret = "whsec_0123456789abcdefghijklmnopqrstuvwxyzABCDE"

describe("delivery signing", () => {
  it("signs the exact raw body with the secret's UTF-8 bytes, as a receiver recomputes it", () => {
    const body = deliveryBody(event)
    const receiver = createHmac("sha256", Buffer.from(secret, "utf8")).update(Buffer.from(body, "utf8")).digest("hex")
    assert.strictEqual(sign(secret, body), receiver)
    assert.match(sign(secret, body), /^[0-9a-f]{64}$/)
  })

  it("frames the body of ruling 20 and the headers of spec 6.2", () => {
    const body = deliveryBody(event)
    assert.deepStrictEqual(JSON.parse(body), { id: "evt_abc", type: "member.created", created_at: event.created_at, data: event.data })
    const headers = deliveryHeaders(event, secret, body)
    assert.deepStrictEqual(headers, {
      "content-type": "application/json",
      "user-agent": "Chamber-Webhooks/1",
      "x-cc-event": "member.created",
      "x-cc-delivery": "evt_abc",
      "x-cc-signature": sign(secret, body)
    })
  })

  it("verification fails for a changed body, another secret or a malformed signature", () => {
    const body = deliveryBody(event)
    const signature = sign(secret, body)
    assert.isTrue(verify(secret, body, signature))
    assert.isFalse(verify(secret, body.replace("Café", "Cafe"), signature))
    assert.isFalse(verify(secret + "x", body, signature))
    assert.isFalse(verify(secret, body, "zz"))
  })
})
