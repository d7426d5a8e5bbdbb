import ipaddr from "ipaddr.js";

type IpAddress = ipaddr.IPv4 | ipaddr.IPv6;

/** Why an address may not be fetched: the address as given and the rule it falls under. */
export interface AddressRefusal {
  address: string;
  /** e.g. `loopback (127.0.0.0/8)`, `cloud metadata (169.254.169.254)`. */
  rule: string;
}

/**
 * What a guarded fetch may reach despite the rules: host names (exact, case-insensitive)
 * and address ranges. Built by {@link parseFetchAllowList}.
 */
export interface FetchAllowList {
  hosts: ReadonlySet<string>;
  ranges: ReadonlyArray<[ipaddr.IPv4 | ipaddr.IPv6, number]>;
}

/** Allows nothing beyond public unicast addresses. */
export const NO_FETCH_ALLOWANCES: FetchAllowList = { hosts: new Set(), ranges: [] };

/** Addresses cloud providers serve instance metadata and credentials on. */
const METADATA_ADDRESSES = new Set(["169.254.169.254", "169.254.170.2", "100.100.100.200"]);
const METADATA_IPV6 = ipaddr.IPv6.parse("fd00:ec2::254");

const IPV4_RULES: Record<string, string> = {
  unspecified: "unspecified (0.0.0.0/8)",
  broadcast: "broadcast (255.255.255.255)",
  multicast: "multicast (224.0.0.0/4)",
  linkLocal: "link-local (169.254.0.0/16)",
  loopback: "loopback (127.0.0.0/8)",
  carrierGradeNat: "carrier-grade NAT (100.64.0.0/10)",
  private: "private (10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16)",
  reserved: "reserved (documentation, benchmarking or future use)",
};

const IPV6_RULES: Record<string, string> = {
  unspecified: "unspecified (::)",
  loopback: "loopback (::1)",
  linkLocal: "link-local (fe80::/10)",
  multicast: "multicast (ff00::/8)",
  uniqueLocal: "unique-local (fc00::/7)",
  deprecatedSiteLocal: "site-local (fec0::/10)",
};

/** NAT64's well-known prefix: the last 32 bits are the IPv4 address reached. */
const NAT64 = ipaddr.IPv6.parse("64:ff9b::");
/** IPv4-compatible addresses (deprecated): `::a.b.c.d`. */
const IPV4_COMPATIBLE = ipaddr.IPv6.parse("::");

/** The IPv4 address in the last 32 bits of an IPv6 address. */
function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4 {
  return ipaddr.IPv4.parse(ipaddr.fromByteArray(address.toByteArray().slice(12)).toString());
}

/** The rule an IPv4 address falls under, or `undefined` for public unicast. */
function ruleOfIPv4(address: ipaddr.IPv4): string | undefined {
  if (METADATA_ADDRESSES.has(address.toString())) return `cloud metadata (${address})`;
  const range = address.range();
  if (range === "unicast") return undefined;
  return IPV4_RULES[range] ?? `special-purpose (${range})`;
}

/** The rule an IPv6 address falls under (an embedded IPv4 address by its own), or `undefined`. */
function ruleOfIPv6(address: ipaddr.IPv6): string | undefined {
  if (address.toNormalizedString() === METADATA_IPV6.toNormalizedString()) {
    return "cloud metadata (fd00:ec2::254)";
  }
  const range = address.range();
  if (range === "ipv4Mapped" || range === "rfc6145" || address.match(NAT64, 96)) {
    const inner = embeddedIPv4(address);
    const rule = ruleOfIPv4(inner);
    return rule && `${rule}, as the IPv6 form of ${inner}`;
  }
  if (range !== "unicast") return IPV6_RULES[range] ?? `special-purpose IPv6 (${range})`;
  if (address.match(IPV4_COMPATIBLE, 96)) return "IPv4-compatible (::/96, deprecated)";
  return undefined;
}

/** `[::1]` → `::1`; anything else unchanged. */
function withoutBrackets(host: string): string {
  return host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
}

/**
 * The rule that forbids fetching `address` (an IPv4 or IPv6 literal, brackets allowed), or
 * `undefined` when it is a public unicast address. Refused: loopback, private (RFC 1918),
 * carrier-grade NAT, link-local, unique-local, site-local, cloud metadata, unspecified,
 * multicast, broadcast, reserved and other special-purpose ranges, and the IPv4-mapped,
 * IPv4-translated and NAT64 (`64:ff9b::/96`) forms of any refused IPv4 address. A string
 * that is no IP address is refused too (fail closed).
 *
 * @example describeRefusedAddress("::ffff:127.0.0.1")
 * // { address: "::ffff:127.0.0.1", rule: "loopback (127.0.0.0/8), as the IPv6 form of 127.0.0.1" }
 * @example describeRefusedAddress("93.184.215.14") // undefined
 */
export function describeRefusedAddress(address: string): AddressRefusal | undefined {
  const text = withoutBrackets(address);
  if (!ipaddr.isValid(text)) return { address, rule: "not an IP address" };
  const parsed = ipaddr.parse(text);
  const rule =
    parsed.kind() === "ipv4"
      ? ruleOfIPv4(parsed as ipaddr.IPv4)
      : ruleOfIPv6(parsed as ipaddr.IPv6);
  return rule === undefined ? undefined : { address, rule };
}

/** True when `address` lies in one of the allowed ranges (IPv4-mapped addresses as IPv4). */
function inAllowedRange(address: string, allow: FetchAllowList): boolean {
  const text = withoutBrackets(address);
  if (!ipaddr.isValid(text)) return false;
  const candidates = [ipaddr.parse(text), ipaddr.process(text)];
  return allow.ranges.some(([base, bits]) =>
    candidates.some((candidate) => candidate.kind() === base.kind() && candidate.match(base, bits)),
  );
}

/** `Example.COM.` → `example.com`: how host names are compared. */
function normalizeHost(host: string): string {
  return host.toLowerCase().replace(/\.$/, "");
}

/** True when `host` (a URL's host name) is named in the allow list. */
export function isAllowedHost(host: string, allow: FetchAllowList): boolean {
  return allow.hosts.has(normalizeHost(withoutBrackets(host)));
}

/**
 * The refusal for connecting to `address`, or `undefined` when the address is public or
 * inside an allowed range. The check a guarded fetch makes on every address it connects to.
 *
 * @example checkFetchAddress("127.0.0.1", parseFetchAllowList(["127.0.0.1/32"])) // undefined
 * @example checkFetchAddress("10.1.2.3", NO_FETCH_ALLOWANCES)?.rule // "private (...)"
 */
export function checkFetchAddress(
  address: string,
  allow: FetchAllowList,
): AddressRefusal | undefined {
  if (inAllowedRange(address, allow)) return undefined;
  return describeRefusedAddress(address);
}

/** One allow-list entry as a range, or `undefined` when it is no address or range. */
function parseRange(entry: string): [IpAddress, number] | undefined {
  const text = withoutBrackets(entry);
  if (entry.includes("/")) {
    if (!ipaddr.isValidCIDR(entry)) throw new Error(`"${entry}" is not a valid CIDR range`);
    return ipaddr.parseCIDR(entry);
  }
  if (!ipaddr.isValid(text)) return undefined;
  const address = ipaddr.parse(text);
  return [address, address.kind() === "ipv4" ? 32 : 128];
}

/** One allow-list entry as a host name; throws when it is none. */
function parseHost(entry: string): string {
  let host: string;
  try {
    host = new URL(`http://${entry}/`).hostname;
  } catch {
    host = "";
  }
  if (host !== entry.toLowerCase()) {
    throw new Error(`"${entry}" is neither a host name, an IP address nor a CIDR range`);
  }
  return normalizeHost(host);
}

/**
 * Reads allow-list entries (`YIEM_HTTP_FETCH_ALLOW`, split on commas): each a host name
 * (`internal.example`, matched exactly and allowed whatever it resolves to), an IP address
 * (`127.0.0.1`, `[::1]`) or a CIDR range (`10.0.0.0/8`, `fd00::/8`). Throws on an entry that
 * is none of these, naming it.
 *
 * @example parseFetchAllowList(["127.0.0.1/32", "internal.example"])
 */
export function parseFetchAllowList(entries: readonly string[]): FetchAllowList {
  const hosts = new Set<string>();
  const ranges: Array<[IpAddress, number]> = [];
  for (const raw of entries) {
    const entry = raw.trim();
    if (entry === "") continue;
    try {
      const range = parseRange(entry);
      if (range) ranges.push(range);
      else hosts.add(parseHost(entry));
    } catch (err) {
      throw new Error(`YIEM_HTTP_FETCH_ALLOW: ${(err as Error).message}`);
    }
  }
  return { hosts, ranges };
}
