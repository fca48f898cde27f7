/**
 * Which IP addresses a webhook may not lead to (ruling 24): loopback, private, link-local,
 * carrier-grade NAT, multicast, unspecified, broadcast, cloud metadata and other non-public
 * ranges, IPv4 and IPv6 alike, an IPv4 address inside IPv6 (mapped, compatible, translated,
 * NAT64, 6to4) judged as the IPv4 address it carries. CHAMBER_WEBHOOK_ALLOW_PRIVATE lifts the
 * refusal of loopback and private ranges (IPv4 RFC 1918, IPv6 unique-local) and of nothing else:
 * link-local and cloud metadata addresses stay refused whatever it says. Used where a
 * subscription is posted (a literal address in its URL) and by the relay on the address it
 * connects to (webhook-relay Destination.ts).
 */

/**
 * [first bytes of the prefix, prefix length in bits, why such an address is refused, whether
 * CHAMBER_WEBHOOK_ALLOW_PRIVATE lifts the refusal]. The first range that matches decides, so
 * the single metadata addresses come before the ranges holding them.
 */
type Range = readonly [prefix: ReadonlyArray<number>, bits: number, reason: string, lifted: boolean]

const IPV4_RANGES: ReadonlyArray<Range> = [
  // The metadata services of AWS, GCP, Azure, OpenStack, DigitalOcean, Oracle... and Alibaba's,
  // and Azure's host endpoint (a public address reachable from its VMs only).
  [[169, 254, 169, 254], 32, "cloud metadata", false],
  [[100, 100, 100, 200], 32, "cloud metadata", false],
  [[168, 63, 129, 16], 32, "cloud metadata", false],
  [[255, 255, 255, 255], 32, "broadcast", false],
  [[0], 8, "unspecified", false],
  [[10], 8, "private", true],
  [[100, 64], 10, "carrier-grade NAT", false],
  [[127], 8, "loopback", true],
  [[169, 254], 16, "link-local", false],
  [[172, 16], 12, "private", true],
  [[192, 0, 0], 24, "reserved (IETF protocol assignments)", false],
  [[192, 0, 2], 24, "documentation", false],
  [[192, 168], 16, "private", true],
  [[198, 18], 15, "benchmarking", false],
  [[198, 51, 100], 24, "documentation", false],
  [[203, 0, 113], 24, "documentation", false],
  [[224], 4, "multicast", false],
  [[240], 4, "reserved", false]
]

const IPV6_RANGES: ReadonlyArray<Range> = [
  // AWS's instance services (metadata fd00:ec2::254, DNS, time) and GCP's metadata server.
  [[0xfd, 0x00, 0x0e, 0xc2, 0, 0, 0, 0], 64, "cloud metadata", false],
  [[0xfd, 0x20, 0x00, 0xce, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x54], 128, "cloud metadata", false],
  [[0x01, 0x00, 0, 0, 0, 0, 0, 0], 64, "discard-only", false],
  [[0x20, 0x01, 0x00, 0x00], 32, "Teredo", false],
  [[0x20, 0x01, 0x0d, 0xb8], 32, "documentation", false],
  [[0x00, 0x64, 0xff, 0x9b, 0x00, 0x01], 48, "local-use NAT64", false],
  [[0xfc], 7, "unique-local", true],
  [[0xfe, 0x80], 10, "link-local", false],
  [[0xfe, 0xc0], 10, "site-local", false],
  [[0xff], 8, "multicast", false]
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

/** Why an address is refused, and whether CHAMBER_WEBHOOK_ALLOW_PRIVATE lifts the refusal. */
type Judgement = readonly [reason: string, lifted: boolean]

const judge = (ranges: ReadonlyArray<Range>, bytes: ReadonlyArray<number>): Judgement | undefined => {
  const range = ranges.find(([prefix, bits]) => within(bytes, prefix, bits))
  return range === undefined ? undefined : [range[2], range[3]]
}

const judgeIp = (ip: string, version: 4 | 6): Judgement | undefined => {
  if (version === 4) return judge(IPV4_RANGES, ipv4Bytes(ip))
  const bytes = ipv6Bytes(ip)
  if (bytes.length !== 16) return ["not an IP address", false]
  if (bytes.every((b) => b === 0)) return ["unspecified", false]
  if (bytes.slice(0, 15).every((b) => b === 0) && bytes[15] === 1) return ["loopback", true]
  for (const [prefix, bits, offset, form] of IPV4_CARRIERS) {
    if (within(bytes, prefix, bits)) {
      const carried = judge(IPV4_RANGES, bytes.slice(offset, offset + 4))
      if (carried !== undefined) return [`${carried[0]} (${form})`, carried[1]]
      // The deprecated compatible form routes nowhere public, whatever IPv4 address it carries.
      return form === "IPv4-compatible" ? ["reserved (IPv4-compatible)", false] : undefined
    }
  }
  return judge(IPV6_RANGES, bytes)
}

/**
 * Why `ip`, a valid address of IP `version`, may not be a webhook's destination ("loopback",
 * "private", "link-local", "cloud metadata", "carrier-grade NAT", "multicast", "unspecified",
 * "unique-local", ...), or undefined when it may. An IPv4 address carried inside IPv6 is judged
 * as that address, its reason then naming the form (e.g. "loopback (IPv4-mapped)"). With
 * `allowPrivate` (CHAMBER_WEBHOOK_ALLOW_PRIVATE) loopback and private addresses may be
 * destinations too; every other refusal stands.
 */
export const classifyIp = (ip: string, version: 4 | 6, allowPrivate = false): string | undefined => {
  const judgement = judgeIp(ip, version)
  return judgement === undefined || (allowPrivate && judgement[1]) ? undefined : judgement[0]
}

const DOTTED = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/

/**
 * Why the literal address a parsed URL's host names may not be a destination (see
 * {@link classifyIp} for `allowPrivate`), or undefined when the host is a name or an address
 * allowed. URL parsing has already made every IPv4 spelling (`0x7f.1`, `2130706433`) dotted
 * decimal and put IPv6 in brackets.
 */
export const literalHostRefusal = (hostname: string, allowPrivate = false): string | undefined => {
  if (hostname.startsWith("[") && hostname.endsWith("]")) return classifyIp(hostname.slice(1, -1), 6, allowPrivate)
  return DOTTED.test(hostname) ? classifyIp(hostname, 4, allowPrivate) : undefined
}
