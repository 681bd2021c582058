/**
 * Where a webhook may be sent (docs/webhooks.md#safety): an `https` URL whose host resolves to public addresses
 * only, never to the service's own network (private, loopback, link-local, unique-local, carrier-grade NAT, a
 * cloud's metadata address, multicast, reserved). Checked when an endpoint is registered and again before every
 * attempt, with the addresses resolved here; the request then connects to the very address that was checked
 * (./send.ts passes it as the socket's `lookup`), so a name that resolves elsewhere between the check and the
 * connection (DNS rebinding) cannot redirect it. Which ranges are special is ipaddr.js's list, with the IPv4
 * addresses inside IPv6 ones judged as well (isPublicAddress).
 *
 * `AMY_WEBHOOKS_ALLOW_PRIVATE=1` lifts both rules (http, and any address) for receivers on a developer's machine
 * and in the tests.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';

/** A URL or an address a webhook may not go to; its message says why, and names no secret. */
export class WebhookAddressRefusedError extends Error {
  override name = 'WebhookAddressRefusedError';
}

export interface AddressPolicy {
  /** AMY_WEBHOOKS_ALLOW_PRIVATE: http, loopback and private addresses allowed. */
  allowPrivate: boolean;
}

export interface CheckedAddress {
  address: string;
  family: 4 | 6;
}

type Resolve = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

const resolveAll: Resolve = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/**
 * IPv4-compatible addresses (::a.b.c.d, RFC 4291 §2.5.5.1), deprecated since 2006: no receiver has one, and a stack
 * that still honours them would send to the embedded IPv4, whatever it is. The range holds :: and ::1 too.
 */
const IPV4_COMPATIBLE = ipaddr.IPv6.parseCIDR('::/96');
/**
 * NAT64's well-known prefix (RFC 6052): DNS64 synthesises these for an IPv4-only receiver on an IPv6-only network,
 * and the translator sends to the low 32 bits, so the address is as public as they are. Its local-use neighbour
 * 64:ff9b:1::/48 (RFC 8215) maps however the operator chose, so it is refused with the other special ranges.
 */
const NAT64_WELL_KNOWN = ipaddr.IPv6.parseCIDR('64:ff9b::/96');

/** The IPv4 address in two 16-bit parts of an IPv6 address, each part XORed with `mask` (Teredo obfuscates). */
function ipv4From(high: number, low: number, mask = 0): ipaddr.IPv4 {
  const [h, l] = [high ^ mask, low ^ mask];
  return new ipaddr.IPv4([h >> 8, h & 0xff, l >> 8, l & 0xff]);
}

/**
 * The IPv4 addresses a packet to this IPv6 address reaches or travels through, for the forms that carry them;
 * null for a native IPv6 address.
 */
function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4[] | null {
  const p = address.parts;
  if (address.isIPv4MappedAddress()) return [address.toIPv4Address()]; // Node connects to the IPv4 itself
  if (address.match(NAT64_WELL_KNOWN)) return [ipv4From(p[6], p[7])];
  if (address.range() === '6to4') return [ipv4From(p[1], p[2])]; // 2002:AABB:CCDD::/48, the site's IPv4 (RFC 3056)
  // 2001:0:SSSS:SSSS:flags:port:CCCC:CCCC, the Teredo server and, obfuscated, the client's NAT (RFC 4380 §4)
  if (address.range() === 'teredo') return [ipv4From(p[2], p[3]), ipv4From(p[6], p[7], 0xffff)];
  return null;
}

function isPublicIPv4(address: ipaddr.IPv4): boolean {
  return address.range() === 'unicast';
}

function isPublicIPv6(address: ipaddr.IPv6): boolean {
  if (address.match(IPV4_COMPATIBLE)) return false;
  const embedded = embeddedIPv4(address);
  if (embedded) return embedded.every(isPublicIPv4);
  return address.range() === 'unicast';
}

/**
 * Whether a webhook may connect to this address: a global unicast one. ipaddr.js 2 names the special ranges (IPv4
 * private, loopback, link-local, carrier-grade NAT, benchmarking, reserved…; IPv6 unique-local, deprecated
 * site-local fec0::/10, discard-only 100::/64, documentation…); an IPv6 address that embeds an IPv4 one (mapped,
 * NAT64, 6to4, Teredo) is public only if every IPv4 address in it is.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.parse(address);
  return parsed.kind() === 'ipv4' ? isPublicIPv4(parsed as ipaddr.IPv4) : isPublicIPv6(parsed as ipaddr.IPv6);
}

/** The URL, if an endpoint may have it: https (or http when private receivers are allowed), no credentials. */
export function checkWebhookUrl(raw: string, policy: AddressPolicy): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new WebhookAddressRefusedError(`not a URL: ${JSON.stringify(raw)}`);
  }
  const schemes = policy.allowPrivate ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) {
    throw new WebhookAddressRefusedError(
      policy.allowPrivate
        ? `a webhook URL must be http or https, not ${url.protocol}`
        : `a webhook URL must be https (http only with AMY_WEBHOOKS_ALLOW_PRIVATE=1, for a local receiver), not ${url.protocol}`,
    );
  }
  if (url.username || url.password) {
    throw new WebhookAddressRefusedError(
      'a webhook URL must not hold credentials: the signature authenticates the sender',
    );
  }
  if (url.hash) throw new WebhookAddressRefusedError('a webhook URL must not have a #fragment');
  return url;
}

/**
 * The address to connect to for `url`: its host resolved, every address it resolves to public (a name with one
 * private address among public ones is refused too: which one a client picks is not ours to predict).
 */
export async function resolveWebhookAddress(
  url: URL,
  policy: AddressPolicy,
  resolve: Resolve = resolveAll,
): Promise<CheckedAddress> {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  let addresses: Array<{ address: string; family: number }>;
  if (ipaddr.isValid(host)) {
    addresses = [{ address: host, family: host.includes(':') ? 6 : 4 }];
  } else {
    try {
      addresses = await resolve(host);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'failed';
      throw new WebhookAddressRefusedError(`${host} does not resolve (${code})`);
    }
  }
  if (addresses.length === 0) throw new WebhookAddressRefusedError(`${host} does not resolve`);
  if (!policy.allowPrivate) {
    const refused = addresses.filter((a) => !isPublicAddress(a.address));
    if (refused.length > 0) {
      throw new WebhookAddressRefusedError(
        `${host} resolves to ${refused.map((a) => a.address).join(', ')}, not a public address ` +
          '(private, loopback and link-local receivers need AMY_WEBHOOKS_ALLOW_PRIVATE=1)',
      );
    }
  }
  const first = addresses[0];
  return { address: first.address, family: first.family === 6 ? 6 : 4 };
}
