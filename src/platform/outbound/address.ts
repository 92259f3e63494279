/**
 * What an outbound host is: a public address or name, a loopback one, or something that must never be
 * reached (private, link-local, metadata, carrier-grade NAT, reserved). Pure and synchronous: the
 * lexical half of the outbound gate, applied to URL host names and to the answers of DNS look-ups.
 */

export type HostClass = { kind: "public" } | { kind: "loopback" } | { kind: "refused"; reason: string };

const PUBLIC: HostClass = { kind: "public" };
const LOOPBACK: HostClass = { kind: "loopback" };
const refused = (reason: string): HostClass => ({ kind: "refused", reason });

/** Names that mean "this machine" or "this network", whatever DNS would say. */
const LOOPBACK_NAMES = [/^localhost$/];
const INTERNAL_NAMES = [
  /\.localhost$/,
  /\.local$/,
  /\.internal$/,
  /\.intranet$/,
  /\.home\.arpa$/,
  /^metadata$/,
  /^metadata\.google\.internal$/,
];

/** IPv4 ranges that are not the public internet (RFC 6890 and friends), loopback apart. */
const REFUSED_V4: [base: number, bits: number, what: string][] = [
  [0x00000000, 8, 'a "this network" address'],
  [0x0a000000, 8, "a private address"],
  [0x64400000, 10, "a carrier-grade NAT address"],
  [0xa9fe0000, 16, "a link-local or metadata address"],
  [0xac100000, 12, "a private address"],
  [0xc0000000, 24, "an IETF protocol assignment"],
  [0xc0000200, 24, "a documentation address"],
  [0xc0586300, 24, "a 6to4 relay address"],
  [0xc0a80000, 16, "a private address"],
  [0xc6120000, 15, "a benchmarking address"],
  [0xc6336400, 24, "a documentation address"],
  [0xcb007100, 24, "a documentation address"],
  [0xe0000000, 4, "a multicast address"],
  [0xf0000000, 4, "a reserved or broadcast address"],
];

function inV4Range(address: number, base: number, bits: number): boolean {
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  return (address & mask) >>> 0 === base;
}

/** An IPv4 address as a 32-bit number, or null when `text` is not a dotted quad. */
export function parseIPv4(text: string): number | null {
  const parts = text.split(".");
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255)) return null;
  return parts.reduce((acc, p) => acc * 256 + Number(p), 0);
}

export function classifyIPv4(address: number): HostClass {
  if (inV4Range(address, 0x7f000000, 8)) return LOOPBACK;
  const hit = REFUSED_V4.find(([base, bits]) => inV4Range(address, base, bits));
  return hit ? refused(hit[2]) : PUBLIC;
}

/** Expands an IPv6 literal (without brackets) into its 8 16-bit groups, or null when it is not one. */
export function parseIPv6(text: string): number[] | null {
  let rest = text;
  let tail: number[] = [];
  const dotted = rest.match(/:(\d+\.\d+\.\d+\.\d+)$/);
  if (dotted?.[1]) {
    const v4 = parseIPv4(dotted[1]);
    if (v4 === null) return null;
    tail = [v4 >>> 16, v4 & 0xffff];
    rest = `${rest.slice(0, -dotted[1].length)}0:0`;
  }
  const halves = rest.split("::");
  if (halves.length > 2) return null;
  const left = halves[0] ? halves[0].split(":") : [];
  const right = halves[1] ? halves[1].split(":") : [];
  const missing = 8 - left.length - right.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  const groups = [...left, ...Array<string>(missing).fill("0"), ...right];
  if (!groups.every((g) => /^[0-9a-f]{1,4}$/i.test(g))) return null;
  const numbers = groups.map((g) => Number.parseInt(g, 16));
  if (tail.length) numbers.splice(6, 2, ...tail);
  return numbers;
}

const v4At = (g: number[], i: number) => (((g[i] ?? 0) << 16) >>> 0) + (g[i + 1] ?? 0);
const zero = (g: number[], from: number, to: number) => g.slice(from, to).every((x) => x === 0);

/**
 * The IPv4 addresses an IPv6 address carries, by the translation or tunnelling scheme that puts them
 * there: an attacker can reach an inside IPv4 host through any of them where a gateway translates.
 */
function embeddedIPv4(g: number[]): number[] {
  const [g0 = 0, g1 = 0, , , g4 = 0, g5 = 0] = g;
  if (zero(g, 0, 5) && g5 === 0xffff) return [v4At(g, 6)]; // IPv4-mapped ::ffff:a.b.c.d
  if (zero(g, 0, 4) && g4 === 0xffff && g5 === 0) return [v4At(g, 6)]; // SIIT ::ffff:0:a.b.c.d
  if (zero(g, 0, 6)) return [v4At(g, 6)]; // IPv4-compatible ::a.b.c.d (deprecated)
  if (g0 === 0x64 && g1 === 0xff9b && zero(g, 2, 6)) return [v4At(g, 6)]; // NAT64 64:ff9b::/96
  if (g0 === 0x2002) return [v4At(g, 1)]; // 6to4 2002:aabb:ccdd::/48
  // Teredo 2001:0::/32: the server's address in clear, the client's inverted in the last 32 bits.
  if (g0 === 0x2001 && g1 === 0) return [v4At(g, 2), ~v4At(g, 6) >>> 0];
  return [];
}

/** IPv6 ranges that are never a public receiver, checked after the embedded-IPv4 forms. */
function refusedV6(g: number[]): string | null {
  const [g0 = 0, g1 = 0, g2 = 0] = g;
  if ((g0 & 0xfe00) === 0xfc00) return "a unique-local address"; // fc00::/7, incl. fd00:ec2::254
  if ((g0 & 0xffc0) === 0xfe80) return "a link-local address";
  if ((g0 & 0xffc0) === 0xfec0) return "a site-local address";
  if ((g0 & 0xff00) === 0xff00) return "a multicast address";
  if (g0 === 0x64 && g1 === 0xff9b) return "a local-use NAT64 address"; // 64:ff9b:1::/48
  if (g0 === 0x100 && zero(g, 1, 4)) return "a discard-only address"; // 100::/64
  if (g0 === 0x2001 && g1 === 0xdb8) return "a documentation address";
  if (g0 === 0x2001 && g1 === 2 && g2 === 0) return "a benchmarking address"; // 2001:2::/48
  if (g0 === 0x2001 && (g1 & 0xffe0) === 0x20) return "an ORCHID address"; // 2001:20::/28
  if (g0 === 0x2001 && (g1 & 0xfff0) === 0x10) return "an ORCHID address"; // 2001:10::/28
  return null;
}

export function classifyIPv6(g: number[]): HostClass {
  if (zero(g, 0, 8)) return refused("the unspecified address");
  if (zero(g, 0, 7) && g[7] === 1) return LOOPBACK;
  const carried = embeddedIPv4(g);
  if (carried.length > 0) {
    const verdicts = carried.map(classifyIPv4);
    // Judged by the address carried: refused if any is, loopback if any is, public otherwise.
    return (
      verdicts.find((v) => v.kind === "refused") ?? verdicts.find((v) => v.kind === "loopback") ?? PUBLIC
    );
  }
  const reason = refusedV6(g);
  return reason ? refused(reason) : PUBLIC;
}

/** A URL's host without its trailing dots (any number of them: `localhost..` is `localhost`). */
export function canonicalHost(hostname: string): string {
  return hostname.toLowerCase().replace(/\.+$/, "");
}

/** The IP address a host name is, when it is a literal (IPv6 in brackets or bare), else null. */
export function ipLiteral(host: string): { v4: number } | { v6: number[] } | null {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  if (bare.includes(":")) {
    const v6 = parseIPv6(bare);
    return v6 ? { v6 } : null;
  }
  const v4 = parseIPv4(bare);
  return v4 === null ? null : { v4 };
}

/** Classifies an IP address given as text (a DNS answer), refusing what does not parse. */
export function classifyAddress(text: string): HostClass {
  const literal = ipLiteral(text.trim());
  if (!literal) return refused("not an IP address");
  return "v4" in literal ? classifyIPv4(literal.v4) : classifyIPv6(literal.v6);
}

/** Classifies a URL's host name (as `new URL().hostname` gives it) by its text alone. */
export function classifyHost(hostname: string): HostClass {
  const host = canonicalHost(hostname);
  if (host === "") return refused("an empty host");
  if (host.startsWith("[")) {
    const v6 = parseIPv6(host.slice(1, -1));
    return v6 ? classifyIPv6(v6) : refused("an unreadable IPv6 address");
  }
  const v4 = parseIPv4(host);
  if (v4 !== null) return classifyIPv4(v4);
  if (LOOPBACK_NAMES.some((pattern) => pattern.test(host))) return LOOPBACK;
  if (INTERNAL_NAMES.some((pattern) => pattern.test(host))) return refused("an internal host name");
  // A single label is completed by the resolver's search list: a name on the local network.
  if (!host.includes(".")) return refused("a single-label host name");
  return PUBLIC;
}
