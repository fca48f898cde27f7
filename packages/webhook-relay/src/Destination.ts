/**
 * Where a delivery may go (docs/webhooks.md "Destinations"; ruling 24).
 *
 * The relay refuses to connect to loopback, private, link-local, carrier-grade NAT, multicast,
 * unspecified, broadcast and other non-public addresses, IPv4 and IPv6 alike, IPv4 inside IPv6
 * (mapped, compatible, translated, NAT64, 6to4) judged by the IPv4 address it carries, and
 * anything that does not parse. The check is made on the address the socket connects to: the
 * agent's `lookup` ({@link guardedLookup}) resolves once and hands the socket exactly the
 * addresses it checked, so a DNS answer that changes between a check and the connect (DNS
 * rebinding) cannot slip through; an IP-literal host, which Node connects to without a lookup,
 * is checked by {@link checkHost}. CHAMBER_WEBHOOK_ALLOW_PRIVATE=true lifts the rule (local
 * development and tests only).
 */
import * as dns from "node:dns"
import { isIP, isIPv4, type LookupFunction } from "node:net"

/** [first bytes of the prefix, prefix length in bits, why such an address is refused] */
type Range = readonly [prefix: ReadonlyArray<number>, bits: number, reason: string]

const IPV4_RANGES: ReadonlyArray<Range> = [
  [[255, 255, 255, 255], 32, "broadcast"],
  [[0], 8, "unspecified"],
  [[10], 8, "private"],
  [[100, 64], 10, "carrier-grade NAT"],
  [[127], 8, "loopback"],
  [[169, 254], 16, "link-local"],
  [[172, 16], 12, "private"],
  [[192, 0, 0], 24, "reserved (IETF protocol assignments)"],
  [[192, 0, 2], 24, "documentation"],
  [[192, 168], 16, "private"],
  [[198, 18], 15, "benchmarking"],
  [[198, 51, 100], 24, "documentation"],
  [[203, 0, 113], 24, "documentation"],
  [[224], 4, "multicast"],
  [[240], 4, "reserved"]
]

const IPV6_RANGES: ReadonlyArray<Range> = [
  [[0x01, 0x00, 0, 0, 0, 0, 0, 0], 64, "discard-only"],
  [[0x20, 0x01, 0x00, 0x00], 32, "Teredo"],
  [[0x20, 0x01, 0x0d, 0xb8], 32, "documentation"],
  [[0x00, 0x64, 0xff, 0x9b, 0x00, 0x01], 48, "local-use NAT64"],
  [[0xfc], 7, "unique-local"],
  [[0xfe, 0x80], 10, "link-local"],
  [[0xfe, 0xc0], 10, "site-local"],
  [[0xff], 8, "multicast"]
]

/** IPv6 prefixes whose address carries an IPv4 address, and where: [prefix, bits, offset of the IPv4 bytes, form]. */
const IPV4_CARRIERS: ReadonlyArray<readonly [ReadonlyArray<number>, number, number, string]> = [
  [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff], 96, 12, "IPv4-mapped"],
  [[0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0], 96, 12, "IPv4-translated"],
  [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], 96, 12, "IPv4-compatible"],
  [[0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0], 96, 12, "NAT64"],
  [[0x20, 0x02], 16, 2, "6to4"]
]

const within = (bytes: ReadonlyArray<number>, prefix: ReadonlyArray<number>, bits: number): boolean => {
  for (let bit = 0; bit < bits; bit += 8) {
    const i = bit / 8
    const mask = bits - bit >= 8 ? 0xff : (0xff << (8 - (bits - bit))) & 0xff
    if (((bytes[i] ?? 0) & mask) !== ((prefix[i] ?? 0) & mask)) return false
  }
  return true
}

const ipv4Bytes = (ip: string): ReadonlyArray<number> => ip.split(".").map(Number)

/** The 16 bytes of a valid IPv6 address (zone id dropped, an IPv4 tail converted). */
const ipv6Bytes = (ip: string): ReadonlyArray<number> => {
  let text = ip.replace(/%.*$/, "")
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)
  if (tail !== null) {
    const [a, b, c, d] = ipv4Bytes(tail[1]!) as [number, number, number, number]
    text = text.slice(0, tail.index) + ((a << 8) | b).toString(16) + ":" + ((c << 8) | d).toString(16)
  }
  const [head, rest] = text.split("::") as [string, string | undefined]
  const groups = (part: string | undefined) => (part === undefined || part === "" ? [] : part.split(":").map((g) => parseInt(g, 16)))
  const left = groups(head)
  const right = groups(rest)
  const all = rest === undefined ? left : [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right]
  return all.flatMap((g) => [g >> 8, g & 0xff])
}

const classifyIPv4 = (bytes: ReadonlyArray<number>): string | undefined =>
  IPV4_RANGES.find(([prefix, bits]) => within(bytes, prefix, bits))?.[2]

/**
 * Why a delivery may not connect to `ip` ("loopback", "private", "link-local", "carrier-grade
 * NAT", "multicast", "unspecified", "broadcast", "unique-local", "not an IP address", ...), or
 * undefined for a public unicast address. An IPv4 address carried inside IPv6 is judged as that
 * IPv4 address, its reason then naming the form (e.g. "loopback (IPv4-mapped)").
 */
export const classifyAddress = (ip: string): string | undefined => {
  const version = isIP(ip)
  if (version === 4) return classifyIPv4(ipv4Bytes(ip))
  if (version !== 6) return "not an IP address"
  const bytes = ipv6Bytes(ip)
  if (bytes.length !== 16) return "not an IP address"
  if (bytes.every((b) => b === 0)) return "unspecified"
  if (bytes.slice(0, 15).every((b) => b === 0) && bytes[15] === 1) return "loopback"
  for (const [prefix, bits, offset, form] of IPV4_CARRIERS) {
    if (within(bytes, prefix, bits)) {
      const reason = classifyIPv4(bytes.slice(offset, offset + 4))
      if (reason !== undefined) return `${reason} (${form})`
      // The deprecated compatible form routes nowhere public, whatever IPv4 address it carries.
      return form === "IPv4-compatible" ? "reserved (IPv4-compatible)" : undefined
    }
  }
  return IPV6_RANGES.find(([prefix, bits]) => within(bytes, prefix, bits))?.[2]
}

/** True when a delivery may not connect to `ip` (see {@link classifyAddress}); anything unparsable is forbidden. */
export const isForbiddenAddress = (ip: string): boolean => classifyAddress(ip) !== undefined

/** A destination the relay refuses: the message names the host, the address and why. */
export class ForbiddenDestinationError extends Error {
  override readonly name = "ForbiddenDestinationError"
  readonly code = "ERR_FORBIDDEN_DESTINATION"
  readonly hostname: string
  readonly address: string
  readonly reason: string
  constructor(hostname: string, address: string, reason: string) {
    super(
      `Refused to deliver to ${hostname === address ? address : `${hostname} (${address})`}: ${reason} address. ` +
        "Webhook destinations must be public addresses (CHAMBER_WEBHOOK_ALLOW_PRIVATE=true allows others, for development and tests only)."
    )
    this.hostname = hostname
    this.address = address
    this.reason = reason
  }
}

/** The error refusing `address` (reached as `hostname`), or undefined when it may be connected to. */
export const checkAddress = (hostname: string, address: string, allowPrivate: boolean): ForbiddenDestinationError | undefined => {
  if (allowPrivate) return undefined
  const reason = classifyAddress(address)
  return reason === undefined ? undefined : new ForbiddenDestinationError(hostname, address, reason)
}

/**
 * The check for a connection's host before the socket is made: an IP literal (brackets of a URL
 * host allowed) is judged here, since Node connects to it without calling `lookup`; a name is
 * left to {@link guardedLookup}.
 */
export const checkHost = (host: string, allowPrivate: boolean): ForbiddenDestinationError | undefined => {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host
  return isIP(bare) === 0 ? undefined : checkAddress(host, bare, allowPrivate)
}

export interface GuardOptions {
  /** CHAMBER_WEBHOOK_ALLOW_PRIVATE: when true nothing is refused. */
  readonly allowPrivate?: boolean
  /** How names are resolved: `dns.lookup` (the system resolver, as Node itself does) unless given, e.g. by tests. */
  readonly resolve?: LookupFunction
}

const systemResolve: LookupFunction = (hostname, options, callback) => dns.lookup(hostname, options, callback)

/**
 * A `lookup` for net, tls and http(s) agents: resolves the name once, asking for every address,
 * and fails with a {@link ForbiddenDestinationError} naming the address when any of them is
 * forbidden; otherwise it answers exactly those addresses, which are then the ones connected to.
 */
export const guardedLookup = (options: GuardOptions = {}): LookupFunction => {
  const resolve = options.resolve ?? systemResolve
  const allowPrivate = options.allowPrivate === true
  return (hostname, lookupOptions, callback) => {
    resolve(hostname, { ...lookupOptions, all: true }, (error, result, family) => {
      if (error !== null) return callback(error, "")
      const addresses: Array<dns.LookupAddress> = typeof result === "string"
        ? [{ address: result, family: family ?? (isIPv4(result) ? 4 : 6) }]
        : [...result]
      const first = addresses[0]
      if (first === undefined) {
        const notFound: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`)
        notFound.code = "ENOTFOUND"
        return callback(notFound, "")
      }
      for (const { address } of addresses) {
        const refused = checkAddress(hostname, address, allowPrivate)
        if (refused !== undefined) return callback(refused, "")
      }
      if (lookupOptions.all === true) callback(null, addresses)
      else callback(null, first.address, first.family)
    })
  }
}

/** The guarded `lookup` with the system resolver, refusing every forbidden address. */
export const lookup: LookupFunction = guardedLookup()

/** CHAMBER_WEBHOOK_ALLOW_PRIVATE: `true` allows private destinations; unset, empty or `false` does not; anything else is an error. */
export const parseAllowPrivate = (text: string | undefined): boolean => {
  const value = (text ?? "").trim().toLowerCase()
  if (value === "true") return true
  if (value === "" || value === "false") return false
  throw new Error(`CHAMBER_WEBHOOK_ALLOW_PRIVATE must be true or false, not "${text}".`)
}
