import { assert, describe, it } from "@effect/vitest"
import type { LookupAddress, LookupOptions } from "node:dns"
import type { LookupFunction } from "node:net"
import {
  checkHost,
  classifyAddress,
  ForbiddenDestinationError,
  guardedLookup,
  isForbiddenAddress,
  lookup,
  NOT_PUBLIC,
  parseAllowPrivate
} from "../src/index.ts"

/** What a lookup answered: an error, or the addresses (one, or all). */
type Answer = { readonly error: NodeJS.ErrnoException } | { readonly addresses: ReadonlyArray<LookupAddress> }

const ask = (fn: LookupFunction, hostname: string, options: LookupOptions = { all: true }): Promise<Answer> =>
  new Promise((resolve) =>
    fn(hostname, options, (error, address, family) => {
      if (error !== null) return resolve({ error })
      resolve({ addresses: typeof address === "string" ? [{ address, family: family ?? 0 }] : address })
    })
  )

/** A resolver that answers `addresses` for every name, counting its calls, as a DNS server under the tests' control. */
const fixedResolver = (addresses: ReadonlyArray<LookupAddress>) => {
  const calls: Array<{ hostname: string; options: LookupOptions }> = []
  const resolve: LookupFunction = (hostname, options, callback) => {
    calls.push({ hostname, options })
    setImmediate(() => (options.all === true ? callback(null, [...addresses]) : callback(null, addresses[0]!.address, addresses[0]!.family)))
  }
  return { resolve, calls }
}

const refusal = (answer: Answer): ForbiddenDestinationError => {
  if (!("error" in answer)) return assert.fail(`not refused: ${JSON.stringify(answer.addresses)}`)
  assert.instanceOf(answer.error, ForbiddenDestinationError)
  return answer.error as ForbiddenDestinationError
}

describe("isForbiddenAddress", () => {
  it("refuses loopback, private, link-local, CGNAT and unspecified addresses, IPv4-mapped ones included", () => {
    const expected: Record<string, string> = {
      "127.0.0.1": "loopback",
      "127.255.0.9": "loopback",
      "::1": "loopback",
      "::ffff:127.0.0.1": "loopback (IPv4-mapped)",
      "::ffff:7f00:1": "loopback (IPv4-mapped)",
      "0:0:0:0:0:ffff:7f00:0001": "loopback (IPv4-mapped)",
      "::ffff:10.0.0.1": "private (IPv4-mapped)",
      "::127.0.0.1": "loopback (IPv4-compatible)",
      "::ffff:0:127.0.0.1": "loopback (IPv4-translated)",
      "64:ff9b::169.254.169.254": "cloud metadata (NAT64)",
      "64:ff9b::169.254.170.2": "link-local (NAT64)",
      "2002:7f00:1::": "loopback (6to4)",
      "10.0.0.1": "private",
      "172.16.0.1": "private",
      "172.31.255.255": "private",
      "192.168.1.1": "private",
      "169.254.169.254": "cloud metadata",
      "169.254.170.2": "link-local",
      "100.100.100.200": "cloud metadata",
      "168.63.129.16": "cloud metadata",
      "fd00:ec2::254": "cloud metadata",
      "fd20:ce::254": "cloud metadata",
      "fe80::1": "link-local",
      "fe80::1%eth0": "link-local",
      "febf::1": "link-local",
      "100.64.0.1": "carrier-grade NAT",
      "100.127.255.254": "carrier-grade NAT",
      "0.0.0.0": "unspecified",
      "0.1.2.3": "unspecified",
      "::": "unspecified",
      "224.0.0.1": "multicast",
      "239.255.255.250": "multicast",
      "ff02::1": "multicast",
      "fc00::1": "unique-local",
      "fd12:3456:789a::1": "unique-local",
      "255.255.255.255": "broadcast",
      "240.0.0.1": "reserved",
      "::8.8.8.8": "reserved (IPv4-compatible)"
    }
    for (const [ip, reason] of Object.entries(expected)) {
      assert.isTrue(isForbiddenAddress(ip), ip)
      assert.strictEqual(classifyAddress(ip), reason, ip)
    }
  })

  it("refuses anything that is not an IP address", () => {
    for (const junk of ["", "localhost", "127.1", "0127.0.0.1", "2130706433", "1.2.3.4.5", "[::1]", "::1::", "gg::1", " 8.8.8.8"]) {
      assert.isTrue(isForbiddenAddress(junk), junk)
      assert.strictEqual(classifyAddress(junk), "not an IP address", junk)
    }
  })

  it("allows public addresses, just outside the forbidden ranges too", () => {
    for (const ip of [
      "8.8.8.8",
      "1.1.1.1",
      "93.184.215.14",
      "172.15.255.255",
      "172.32.0.1",
      "100.63.255.255",
      "100.128.0.1",
      "169.253.1.1",
      "11.0.0.1",
      "126.255.255.255",
      "128.0.0.1",
      "223.255.255.255",
      "2606:4700:4700::1111",
      "2001:4860:4860::8888",
      "::ffff:8.8.8.8",
      "64:ff9b::8.8.8.8",
      "2002:808:808::1",
      "fbff::1",
      "168.63.129.15",
      "168.63.129.17"
    ]) {
      assert.isFalse(isForbiddenAddress(ip), ip)
    }
  })
})

describe("CHAMBER_WEBHOOK_ALLOW_PRIVATE's reach", () => {
  it("opens loopback and private ranges, in every IPv6 form carrying them", () => {
    for (const ip of [
      "127.0.0.1",
      "::1",
      "::ffff:127.0.0.1",
      "10.0.0.1",
      "172.16.0.1",
      "192.168.1.1",
      "::ffff:192.168.1.1",
      "64:ff9b::10.0.0.1",
      "fd12:3456:789a::1",
      "fc00::1",
      "fd00:ec3::254"
    ]) {
      assert.isTrue(isForbiddenAddress(ip), ip)
      assert.isFalse(isForbiddenAddress(ip, true), ip)
    }
  })

  it("never opens link-local or cloud metadata addresses, nor any other non-public range", () => {
    const expected: Record<string, string> = {
      "169.254.169.254": "cloud metadata",
      "169.254.170.2": "link-local",
      "169.254.0.23": "link-local",
      "::ffff:169.254.169.254": "cloud metadata (IPv4-mapped)",
      "::ffff:a9fe:a9fe": "cloud metadata (IPv4-mapped)",
      "::ffff:0:169.254.169.254": "cloud metadata (IPv4-translated)",
      "::169.254.169.254": "cloud metadata (IPv4-compatible)",
      "64:ff9b::a9fe:a9fe": "cloud metadata (NAT64)",
      "2002:a9fe:a9fe::": "cloud metadata (6to4)",
      "::ffff:169.254.1.1": "link-local (IPv4-mapped)",
      "64:ff9b::169.254.1.1": "link-local (NAT64)",
      "fe80::1": "link-local",
      "fe80::a9fe:a9fe%eth0": "link-local",
      "febf:ffff::1": "link-local",
      "fd00:ec2::254": "cloud metadata",
      "fd00:ec2::23": "cloud metadata",
      "fd20:ce::254": "cloud metadata",
      "100.100.100.200": "cloud metadata",
      "::ffff:100.100.100.200": "cloud metadata (IPv4-mapped)",
      "168.63.129.16": "cloud metadata",
      "100.64.0.1": "carrier-grade NAT",
      "0.0.0.0": "unspecified",
      "::": "unspecified",
      "224.0.0.1": "multicast",
      "not-an-ip": "not an IP address"
    }
    for (const [ip, reason] of Object.entries(expected)) {
      assert.strictEqual(classifyAddress(ip, true), reason, ip)
    }
  })
})

describe("guarded lookup", () => {
  it("refuses a name that resolves to loopback (localhost, through the system resolver), the address for the operator only", async () => {
    const error = refusal(await ask(lookup, "localhost"))
    assert.strictEqual(error.hostname, "localhost")
    assert.isTrue(isForbiddenAddress(error.address))
    assert.strictEqual(error.message, NOT_PUBLIC)
    assert.notInclude(error.message, error.address)
    assert.notInclude(error.message, "localhost")
    assert.match(error.detail, /^localhost resolved to (127\.0\.0\.1|::1): loopback address$/)
    assert.strictEqual(error.code, "ERR_FORBIDDEN_DESTINATION")
    // the single-address form Node asks for without autoSelectFamily is guarded the same way
    refusal(await ask(lookup, "localhost", { family: 4 }))
  })

  it("refuses when any of the addresses a name resolves to is forbidden, resolving once", async () => {
    const { resolve, calls } = fixedResolver([
      { address: "93.184.215.14", family: 4 },
      { address: "::ffff:169.254.169.254", family: 6 }
    ])
    const error = refusal(await ask(guardedLookup({ resolve }), "rebind.example"))
    assert.strictEqual(error.address, "::ffff:169.254.169.254")
    assert.strictEqual(error.reason, "cloud metadata (IPv4-mapped)")
    assert.lengthOf(calls, 1)
    assert.isTrue(calls[0]!.options.all, "every address is asked for, so none goes unchecked")
  })

  it("refuses an answer that is not an IP address, and passes resolver errors on", async () => {
    const { resolve } = fixedResolver([{ address: "not-an-ip", family: 4 }])
    assert.strictEqual(refusal(await ask(guardedLookup({ resolve }), "odd.example")).reason, "not an IP address")
    const failing: LookupFunction = (hostname, _options, callback) => {
      const error: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`)
      error.code = "ENOTFOUND"
      callback(error, "")
    }
    const answer = await ask(guardedLookup({ resolve: failing }), "nowhere.invalid")
    assert.isTrue("error" in answer && answer.error.code === "ENOTFOUND")
    const empty = await ask(guardedLookup({ resolve: fixedResolver([]).resolve }), "empty.example")
    assert.isTrue("error" in empty && empty.error.code === "ENOTFOUND")
  })

  it("answers exactly the public addresses resolved, in the form asked for", async () => {
    const addresses = [{ address: "93.184.215.14", family: 4 }, { address: "2606:2800:21f:cb07:6820:80da:af6b:8b2c", family: 6 }]
    const { resolve } = fixedResolver(addresses)
    assert.deepStrictEqual(await ask(guardedLookup({ resolve }), "example.com"), { addresses })
    assert.deepStrictEqual(await ask(guardedLookup({ resolve }), "example.com", {}), { addresses: [addresses[0]!] })
  })

  it("allowPrivate lifts the rule for loopback and private addresses", async () => {
    const { resolve } = fixedResolver([{ address: "127.0.0.1", family: 4 }])
    assert.deepStrictEqual(await ask(guardedLookup({ resolve, allowPrivate: true }), "localhost"), {
      addresses: [{ address: "127.0.0.1", family: 4 }]
    })
    const local = await ask(guardedLookup({ allowPrivate: true }), "localhost")
    assert.isTrue("addresses" in local && local.addresses.length > 0)
    const lan = [{ address: "10.1.2.3", family: 4 }, { address: "fd12:3456:789a::1", family: 6 }]
    assert.deepStrictEqual(await ask(guardedLookup({ resolve: fixedResolver(lan).resolve, allowPrivate: true }), "lan.test"), { addresses: lan })
  })

  it("allowPrivate leaves a name resolving to link-local or metadata addresses refused, among private ones too", async () => {
    for (const address of ["169.254.169.254", "169.254.170.2", "fe80::1", "fd00:ec2::254", "::ffff:169.254.169.254", "100.100.100.200"]) {
      const { resolve } = fixedResolver([{ address: "10.0.0.7", family: 4 }, { address, family: address.includes(":") ? 6 : 4 }])
      const error = refusal(await ask(guardedLookup({ resolve, allowPrivate: true }), "metadata.test"))
      assert.strictEqual(error.address, address)
      assert.strictEqual(error.message, NOT_PUBLIC)
    }
  })
})

describe("IP-literal hosts", () => {
  it("are checked before connecting, URL brackets allowed; names are left to the lookup", () => {
    assert.strictEqual(checkHost("127.0.0.1", false)?.reason, "loopback")
    assert.strictEqual(checkHost("::ffff:7f00:1", false)?.reason, "loopback (IPv4-mapped)")
    assert.strictEqual(checkHost("[::1]", false)?.reason, "loopback")
    assert.strictEqual(checkHost(new URL("https://2130706433/").hostname, false)?.reason, "loopback")
    assert.strictEqual(checkHost(new URL("https://[::ffff:127.0.0.1]/").hostname, false)?.reason, "loopback (IPv4-mapped)")
    assert.isUndefined(checkHost("8.8.8.8", false))
    assert.isUndefined(checkHost("localhost", false))
    assert.isUndefined(checkHost("127.0.0.1", true))
    assert.isUndefined(checkHost("[fd12::1]", true))
    assert.strictEqual(checkHost("169.254.169.254", true)?.reason, "cloud metadata")
    assert.strictEqual(checkHost("[fe80::1]", true)?.reason, "link-local")
    assert.strictEqual(checkHost(new URL("https://0xa9fea9fe/").hostname, true)?.reason, "cloud metadata")
    assert.strictEqual(checkHost("[fd00:ec2::254]", true)?.reason, "cloud metadata")
    assert.strictEqual(checkHost("8.8.8.8", true), undefined)
  })
})

describe("CHAMBER_WEBHOOK_ALLOW_PRIVATE", () => {
  it("is true only when set to true; a value that is neither is an error", () => {
    assert.isFalse(parseAllowPrivate(undefined))
    assert.isFalse(parseAllowPrivate(""))
    assert.isFalse(parseAllowPrivate("false"))
    assert.isTrue(parseAllowPrivate("true"))
    assert.isTrue(parseAllowPrivate("TRUE"))
    assert.throws(() => parseAllowPrivate("yes"), /CHAMBER_WEBHOOK_ALLOW_PRIVATE must be true or false, not "yes"/)
  })
})
