/**
 * Where a delivery may go (docs/webhooks.md "Destinations"; ruling 24).
 *
 * The relay refuses to connect to loopback, private, link-local, cloud metadata, carrier-grade
 * NAT, multicast, unspecified, broadcast and other non-public addresses, IPv4 and IPv6 alike,
 * IPv4 inside IPv6 (mapped, compatible, translated, NAT64, 6to4) judged by the IPv4 address it
 * carries, and anything that does not parse. The check is made on the address the socket
 * connects to: the agent's `lookup` ({@link guardedLookup}) resolves once and hands the socket
 * exactly the addresses it checked, so a DNS answer that changes between a check and the connect
 * (DNS rebinding) cannot slip through; an IP-literal host, which Node connects to without a
 * lookup, is checked by {@link checkHost}. CHAMBER_WEBHOOK_ALLOW_PRIVATE=true lifts the rule for
 * loopback and private addresses only (local development and tests).
 *
 * What a chamber is told of a refusal ({@link NOT_PUBLIC}) is the same for a name that resolves
 * to a refused address and for a name that does not resolve, and never holds an address, so it
 * maps no internal DNS; the detail is the operator's (ForbiddenDestinationError's fields).
 */
import * as dns from "node:dns"
import { isIP, isIPv4, type LookupFunction } from "node:net"
import { classifyIp } from "@chamber/core"

/**
 * Why a delivery may not connect to `ip` ("loopback", "private", "link-local", "cloud metadata",
 * "carrier-grade NAT", "multicast", "unspecified", "broadcast", "unique-local", "not an IP
 * address", ...), or undefined when it may: a public unicast address, or with `allowPrivate` a
 * loopback or private one too (core AddressRanges.ts holds the ranges).
 */
export const classifyAddress = (ip: string, allowPrivate = false): string | undefined => {
  const version = isIP(ip)
  return version === 4 || version === 6 ? classifyIp(ip, version, allowPrivate) : "not an IP address"
}

/** True when a delivery may not connect to `ip` (see {@link classifyAddress}); anything unparsable is forbidden. */
export const isForbiddenAddress = (ip: string, allowPrivate = false): boolean => classifyAddress(ip, allowPrivate) !== undefined

/**
 * What a chamber is told when its destination is refused or its name does not resolve: one text
 * for both, naming no address, and saying what the integrator can fix.
 */
export const NOT_PUBLIC =
  "Refused: the destination's host does not resolve to a public address. " +
  "A webhook's host must be a public address, or a name that resolves in public DNS to public addresses only."

/** A destination the relay refuses: its message is {@link NOT_PUBLIC}; the host, the address and why are for the operator. */
export class ForbiddenDestinationError extends Error {
  override readonly name = "ForbiddenDestinationError"
  readonly code = "ERR_FORBIDDEN_DESTINATION"
  readonly hostname: string
  readonly address: string
  readonly reason: string
  constructor(hostname: string, address: string, reason: string) {
    super(NOT_PUBLIC)
    this.hostname = hostname
    this.address = address
    this.reason = reason
  }
  /** For the operator's log only, never a chamber's eyes: the host, the address it leads to and why that is refused. */
  get detail(): string {
    return `${this.hostname === this.address ? this.address : `${this.hostname} resolved to ${this.address}`}: ${this.reason} address`
  }
}

/** The error refusing `address` (reached as `hostname`), or undefined when it may be connected to. */
export const checkAddress = (hostname: string, address: string, allowPrivate: boolean): ForbiddenDestinationError | undefined => {
  const reason = classifyAddress(address, allowPrivate)
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
  /** CHAMBER_WEBHOOK_ALLOW_PRIVATE: when true loopback and private addresses are allowed (nothing else). */
  readonly allowPrivate?: boolean
  /** How names are resolved: `dns.lookup` (the system resolver, as Node itself does) unless given, e.g. by tests. */
  readonly resolve?: LookupFunction
}

const systemResolve: LookupFunction = (hostname, options, callback) => dns.lookup(hostname, options, callback)

/**
 * A `lookup` for net, tls and http(s) agents: resolves the name once, asking for every address,
 * and fails with a {@link ForbiddenDestinationError} when any of them is forbidden; otherwise it
 * answers exactly those addresses, which are then the ones connected to.
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

/** CHAMBER_WEBHOOK_ALLOW_PRIVATE: `true` allows loopback and private destinations; unset, empty or `false` does not; anything else is an error. */
export const parseAllowPrivate = (text: string | undefined): boolean => {
  const value = (text ?? "").trim().toLowerCase()
  if (value === "true") return true
  if (value === "" || value === "false") return false
  throw new Error(`CHAMBER_WEBHOOK_ALLOW_PRIVATE must be true or false, not "${text}".`)
}
