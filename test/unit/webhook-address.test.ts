/** Where a webhook may go (platform/webhooks/address-check.ts): https, public addresses, unless private ones are allowed. */
import {
  checkWebhookUrl,
  isPublicAddress,
  resolveWebhookAddress,
  WebhookAddressRefusedError,
} from '../../platform/webhooks/address-check';

const strict = { allowPrivate: false };
const local = { allowPrivate: true };

test.each([
  '127.0.0.1',
  '10.1.2.3',
  '172.16.0.1',
  '192.168.1.1',
  '169.254.169.254', // a cloud's metadata service
  '100.64.0.1', // carrier-grade NAT
  '0.0.0.0',
  '224.0.0.1',
  '198.18.0.1',
  '255.255.255.255',
  '::1',
  '::',
  'fe80::1',
  'fc00::1',
  'fd00:ec2::254', // a cloud's IPv6 metadata service (unique-local)
  '2001:db8::1', // documentation
  'not an address',
])('%s is not public', (address) => {
  expect(isPublicAddress(address)).toBe(false);
});

describe('IPv6 ranges that are not global unicast', () => {
  test.each([
    ['::7f00:1', 'IPv4-compatible 127.0.0.1'],
    ['::a00:1', 'IPv4-compatible 10.0.0.1'],
    ['::808:808', 'IPv4-compatible, even of a public IPv4 (deprecated; nothing public lives there)'],
    ['fec0::1', 'deprecated site-local fec0::/10'],
    ['feff:ffff::1', 'the top of fec0::/10'],
    ['64:ff9b:1::808:808', 'local-use NAT64 64:ff9b:1::/48: the operator decides where it goes'],
    ['100::1', 'discard-only 100::/64'],
  ])('%s (%s) is refused', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });
});

describe('an IPv6 address that embeds an IPv4 one is as public as the IPv4 address', () => {
  test.each([
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:10.0.0.1', 'IPv4-mapped private'],
    ['64:ff9b::a00:1', 'NAT64 of 10.0.0.1'],
    ['64:ff9b::a9fe:a9fe', 'NAT64 of the metadata address 169.254.169.254'],
    ['2002:a00:1::', '6to4 of 10.0.0.1'],
    ['2002:7f00:1::1', '6to4 of 127.0.0.1'],
    ['2001:0:4136:e378:8000:63bf:3f57:fefe', 'Teredo, client 192.168.1.1 (obfuscated), public server'],
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'Teredo, client 127.0.0.1 (obfuscated), public server'],
    ['2001:0:7f00:1:8000:63bf:f7f7:f7f7', 'Teredo, server 127.0.0.1, public client'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', "RFC 4380's own example: client 192.0.2.45, documentation"],
  ])('%s (%s) is refused', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  test.each([
    ['::ffff:8.8.8.8', 'IPv4-mapped'],
    ['64:ff9b::808:808', 'NAT64 of 8.8.8.8, as DNS64 gives an IPv6-only network'],
    ['2002:808:808::1', '6to4 of 8.8.8.8'],
    ['2001:0:4136:e378:8000:63bf:f7f7:f7f7', 'Teredo, server 65.54.227.120, client 8.8.8.8 (obfuscated)'],
  ])('%s (%s) is public', (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });
});

test.each(['93.184.215.14', '1.1.1.1', '2606:4700:4700::1111'])('%s is public', (address) => {
  expect(isPublicAddress(address)).toBe(true);
});

test('URLs: https only unless private receivers are allowed; no credentials, no fragment', () => {
  expect(checkWebhookUrl('https://hooks.example.com/amy', strict).hostname).toBe('hooks.example.com');
  expect(() => checkWebhookUrl('http://hooks.example.com/amy', strict)).toThrow(/must be https/);
  expect(checkWebhookUrl('http://127.0.0.1:8080/amy', local).port).toBe('8080');
  expect(() => checkWebhookUrl('ftp://hooks.example.com', local)).toThrow(WebhookAddressRefusedError);
  expect(() => checkWebhookUrl('https://user:pw@hooks.example.com', strict)).toThrow(/credentials/);
  expect(() => checkWebhookUrl('https://hooks.example.com/#x', strict)).toThrow(/fragment/);
  expect(() => checkWebhookUrl('hooks.example.com', strict)).toThrow(/not a URL/);
});

const resolvingTo =
  (...addresses: string[]) =>
  async () =>
    addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

test('a name resolving to a private address is refused, even with public ones beside it', async () => {
  const url = new URL('https://rebind.example.com/hook');
  await expect(resolveWebhookAddress(url, strict, resolvingTo('127.0.0.1'))).rejects.toThrow(
    /resolves to 127\.0\.0\.1, not a public address/,
  );
  await expect(resolveWebhookAddress(url, strict, resolvingTo('93.184.215.14', '10.0.0.5'))).rejects.toThrow(
    /10\.0\.0\.5/,
  );
  await expect(resolveWebhookAddress(url, strict, resolvingTo('93.184.215.14'))).resolves.toEqual({
    address: '93.184.215.14',
    family: 4,
  });
  await expect(resolveWebhookAddress(url, local, resolvingTo('127.0.0.1'))).resolves.toEqual({
    address: '127.0.0.1',
    family: 4,
  });
});

test('address literals are checked without DNS, IPv6 in brackets too', async () => {
  const never = async () => {
    throw new Error('resolved');
  };
  await expect(resolveWebhookAddress(new URL('https://[::1]/'), strict, never)).rejects.toThrow(/::1/);
  await expect(resolveWebhookAddress(new URL('https://169.254.169.254/'), strict, never)).rejects.toThrow(
    WebhookAddressRefusedError,
  );
  await expect(resolveWebhookAddress(new URL('https://[2606:4700:4700::1111]/'), strict, never)).resolves.toEqual({
    address: '2606:4700:4700::1111',
    family: 6,
  });
});

test('a name that does not resolve is refused with the resolver code', async () => {
  const failing = async () => {
    throw Object.assign(new Error('nope'), { code: 'ENOTFOUND' });
  };
  await expect(resolveWebhookAddress(new URL('https://nowhere.invalid/'), strict, failing)).rejects.toThrow(
    /does not resolve \(ENOTFOUND\)/,
  );
});
