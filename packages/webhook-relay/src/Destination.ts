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
import { classifyIp } from "@chamber/core"

/**
 * Why a delivery may not connect to `ip` ("loopback", "private", "link-local", "carrier-grade
 * NAT", "multicast", "unspecified", "broadcast", "unique-local", "not an IP address", ...), or
 * undefined for a public unicast address (core AddressRanges.ts holds the ranges).
 */
export const classifyAddress = (ip: string): string | undefined => {
  const version = isIP(ip)
  return version === 4 || version === 6 ? classifyIp(ip, version) : "not an IP address"
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
