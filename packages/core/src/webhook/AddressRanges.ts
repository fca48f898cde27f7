/**
 * Which IP addresses a webhook may not lead to (ruling 24): loopback, private, link-local,
 * carrier-grade NAT, multicast, unspecified, broadcast and other non-public ranges, IPv4 and IPv6
 * alike, an IPv4 address inside IPv6 (mapped, compatible, translated, NAT64, 6to4) judged as the
 * IPv4 address it carries. Used where a subscription is posted (a literal address in its URL) and
 * by the relay on the address it connects to (webhook-relay Destination.ts).
 */

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
 * Why `ip`, a valid address of IP `version`, may not be a webhook's destination ("loopback",
 * "private", "link-local", "carrier-grade NAT", "multicast", "unspecified", "unique-local", ...),
 * or undefined for a public unicast address. An IPv4 address carried inside IPv6 is judged as
 * that address, its reason then naming the form (e.g. "loopback (IPv4-mapped)").
 */
export const classifyIp = (ip: string, version: 4 | 6): string | undefined => {
  if (version === 4) return classifyIPv4(ipv4Bytes(ip))
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

const DOTTED = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/

/**
 * Why the literal address a parsed URL's host names may not be a destination, or undefined when
 * the host is a name or a public address. URL parsing has already made every IPv4 spelling
 * (`0x7f.1`, `2130706433`) dotted decimal and put IPv6 in brackets.
 */
export const literalHostRefusal = (hostname: string): string | undefined => {
  if (hostname.startsWith("[") && hostname.endsWith("]")) return classifyIp(hostname.slice(1, -1), 6)
  return DOTTED.test(hostname) ? classifyIp(hostname, 4) : undefined
}
