/**
 * Where a webhook may be sent (docs/webhooks.md#safety): an `https` URL whose host resolves to public addresses
 * only, never to the service's own network (private, loopback, link-local, unique-local, carrier-grade NAT, a
 * cloud's metadata address, multicast, reserved). Checked when an endpoint is registered and again before every
 * attempt, with the addresses resolved here; the request then connects to the very address that was checked
 * (./send.ts passes it as the socket's `lookup`), so a name that resolves elsewhere between the check and the
 * connection (DNS rebinding) cannot redirect it. Which ranges are special is ipaddr.js's list.
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

/** Beyond ipaddr.js's special ranges: network benchmarking (RFC 2544), never a public receiver. */
const ALSO_REFUSED = [ipaddr.IPv4.parseCIDR('198.18.0.0/15')];

/** Whether a webhook may connect to this address: a global unicast one (an IPv4-mapped IPv6 address as its IPv4). */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  }
  if (parsed.range() !== 'unicast') return false;
  const ipv4 = parsed.kind() === 'ipv4' ? (parsed as ipaddr.IPv4) : null;
  return !ALSO_REFUSED.some((range) => ipv4?.match(range));
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
