/**
 * The one redaction rule of log lines, spans and metric labels (shared/Redaction.ts,
 * docs/operations.md "What telemetry never carries"), on the texts each of them holds.
 */
import { assert, describe, it } from "@effect/vitest"
import { redactSecrets } from "../src/index.ts"

const KEY = `cck_${"A1b2C3d4E5".repeat(4)}`
const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw5dL4Y6sZtQ0="

describe("redactSecrets", () => {
  it("a key or a secret anywhere, as sent or percent-encoded", () => {
    const cases: ReadonlyArray<readonly [string, string]> = [
      [`/api/v1/members/${KEY}`, "/api/v1/members/[redacted]"],
      [`/api/v1/members?name=${KEY}&page=2`, "/api/v1/members?name=[redacted]&page=2"],
      [`name=${KEY}&page=2`, "name=[redacted]&page=2"],
      [`/api/v1/hooks?s=${encodeURIComponent(SECRET)}&x=1`, "/api/v1/hooks?s=[redacted]&x=1"],
      [`http://127.0.0.1:8080/api/v1/${KEY}/members?page=1`, "http://127.0.0.1:8080/api/v1/[redacted]/members?page=1"],
      [`Unknown event type "${SECRET}"; expected one of member.created, ...`, `Unknown event type "[redacted]"; expected one of member.created, ...`],
      [`Error: ${KEY}\n    at handler (file.ts:1:1)`, "Error: [redacted]\n    at handler (file.ts:1:1)"]
    ]
    for (const [text, redacted] of cases) assert.strictEqual(redactSecrets(text), redacted, text)
  })

  it("the value of a secret-looking parameter, whatever it holds, and OpenTelemetry's names", () => {
    const cases: ReadonlyArray<readonly [string, string]> = [
      ["/api/v1/members?api_key=abc&page=1", "/api/v1/members?api_key=[redacted]&page=1"],
      ["/x?page=1&Access_Token=abc", "/x?page=1&Access_Token=[redacted]"],
      ["/x?%61uth=abc", "/x?%61uth=[redacted]"],
      ["password=hunter2&next=/home", "password=[redacted]&next=/home"],
      ["/file?X-Amz-Credential=AKIA&X-Amz-Signature=ff&sig=1&size=2", "/file?X-Amz-Credential=[redacted]&X-Amz-Signature=[redacted]&sig=[redacted]&size=2"],
      // A value ends at a quote, a backslash or white space: a JSON or logfmt line stays well-formed.
      [`{"path":"/x?token=abc","status":200}`, `{"path":"/x?token=[redacted]","status":200}`],
      ["level=INFO path=/x?token=abc status=200", "level=INFO path=/x?token=[redacted] status=200"]
    ]
    for (const [text, redacted] of cases) assert.strictEqual(redactSecrets(text), redacted, text)
  })

  it("text with nothing to redact is returned as it is", () => {
    for (const text of [
      "/api/v1/members?sort=name&page=2",
      "SELECT id FROM api_keys WHERE key_hash = $1 AND tenant_id=$2",
      "level=INFO message=request status=200",
      "cck_short",
      "/api/v1/members/monkey",
      ""
    ]) assert.strictEqual(redactSecrets(text), text)
  })
})
