/** @chamber/webhook-relay: signing and framing of outbound deliveries (the relay loop comes with the webhooks work). */
export * from "./Signature.ts"
