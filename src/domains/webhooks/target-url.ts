/**
 * Where a webhook may point. Production refuses anything that could reach inside a network (private,
 * loopback, link-local and metadata addresses, `localhost` names, plain http); local development
 * sets ALLOW_PRIVATE_TARGETS="true" to reach a receiver on the developer's own machine.
 */
export const MAX_URL_LENGTH = 2048;

const BLOCKED_NAMES = [
  /^localhost$/,
  /\.localhost$/,
  /\.local$/,
  /\.internal$/,
  /^metadata$/,
  /^metadata\.google\.internal$/,
];

/** IPv4 ranges that are not the public internet (RFC 6890 and friends). */
const BLOCKED_V4: [number, number][] = [
  [0x00000000, 8], // "this" network
  [0x0a000000, 8], // private
  [0x64400000, 10], // carrier-grade NAT
  [0x7f000000, 8], // loopback
  [0xa9fe0000, 16], // link-local, including the 169.254.169.254 metadata service
  [0xac100000, 12], // private
  [0xc0000000, 24], // IETF protocol assignments
  [0xc0000200, 24], // TEST-NET-1
  [0xc0a80000, 16], // private
  [0xc6120000, 15], // benchmarking
  [0xc6336400, 24], // TEST-NET-2
  [0xcb007100, 24], // TEST-NET-3
  [0xe0000000, 4], // multicast
  [0xf0000000, 4], // reserved and broadcast
];

function parseIPv4(host: string): number | null {
  const parts = host.split(".");
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255)) return null;
  return parts.reduce((acc, p) => acc * 256 + Number(p), 0);
}

function isBlockedV4(address: number): boolean {
  return BLOCKED_V4.some(([base, bits]) => {
    const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
    return (address & mask) >>> 0 === base;
  });
}

/** Expands an IPv6 literal (the URL parser has already normalised it) into 8 16-bit groups. */
function parseIPv6(host: string): number[] | null {
  let text = host;
  let tail: number[] = [];
  const v4 = text.match(/:(\d+\.\d+\.\d+\.\d+)$/);
  if (v4) {
    const address = parseIPv4(v4[1]!);
    if (address === null) return null;
    tail = [address >>> 16, address & 0xffff];
    text = text.slice(0, -v4[1]!.length) + "0:0";
  }
  const [head, rest] = text.split("::");
  const left = head ? head.split(":") : [];
  const right = rest ? rest.split(":") : [];
  const missing = 8 - left.length - right.length;
  if (text.includes("::") ? missing < 0 : missing !== 0) return null;
  const groups = [...left, ...Array(text.includes("::") ? missing : 0).fill("0"), ...right].map((g) =>
    parseInt(g, 16),
  );
  if (groups.some((g) => Number.isNaN(g))) return null;
  if (tail.length) groups.splice(6, 2, ...tail);
  return groups;
}

function isBlockedV6(groups: number[]): boolean {
  const [g0, , , , , g5] = groups as [number, number, number, number, number, number, number, number];
  if (groups.every((g) => g === 0)) return true; // unspecified
  if (groups.slice(0, 7).every((g) => g === 0) && groups[7] === 1) return true; // loopback
  if ((g0 & 0xfe00) === 0xfc00) return true; // unique local, including fd00:ec2::254 (AWS metadata)
  if ((g0 & 0xffc0) === 0xfe80) return true; // link-local
  if ((g0 & 0xff00) === 0xff00) return true; // multicast
  // IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible addresses are judged as the IPv4 they carry.
  if (groups.slice(0, 5).every((g) => g === 0) && (g5 === 0xffff || g5 === 0))
    return isBlockedV4(((groups[6]! << 16) >>> 0) + groups[7]!);
  if (g0 === 0x64 && groups[1] === 0xff9b) return isBlockedV4(((groups[6]! << 16) >>> 0) + groups[7]!); // NAT64
  return false;
}

export function isPrivateHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, "");
  if (host.startsWith("[") && host.endsWith("]")) {
    const groups = parseIPv6(host.slice(1, -1));
    return groups === null || isBlockedV6(groups);
  }
  const v4 = parseIPv4(host);
  if (v4 !== null) return isBlockedV4(v4);
  return BLOCKED_NAMES.some((pattern) => pattern.test(host));
}

/** Null when the URL is acceptable, otherwise why not (a sentence fragment for a 422). */
export function targetUrlProblem(raw: string, allowPrivate: boolean): string | null {
  if (raw.length > MAX_URL_LENGTH) return `must be at most ${MAX_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "must be an absolute URL";
  }
  const schemes = allowPrivate ? ["https:", "http:"] : ["https:"];
  if (!schemes.includes(url.protocol))
    return allowPrivate ? "must be an http or https URL" : "must be an https URL";
  if (url.username || url.password)
    return "must not contain credentials; authenticate deliveries by their signature";
  if (url.hash) return "must not contain a fragment";
  if (!allowPrivate && isPrivateHost(url.hostname))
    return "must not point at a private, loopback, link-local or metadata address";
  return null;
}
