import type { FastifyRequest } from 'fastify';

import { clientAddress, clientAddressKey } from './client-address';

/** What Fastify hands over: `ips` (socket first, then what trusted proxies forwarded), `ip`, the socket. */
const request = (fields: { ips?: string[]; ip?: string; socket?: string }) =>
  ({
    ips: fields.ips,
    ip: fields.ip ?? fields.ips?.at(-1) ?? '',
    socket: { remoteAddress: fields.socket ?? '127.0.0.1' },
  }) as unknown as FastifyRequest;

describe('clientAddress', () => {
  it('is the address the last trusted hop names', () => {
    expect(clientAddress(request({ ips: ['127.0.0.1', '203.0.113.9', '198.51.100.7'] }))).toBe('198.51.100.7');
  });

  it('passes over a forwarded value that is not an address, counting the request at the hop before it', () => {
    expect(clientAddress(request({ ips: ['127.0.0.1', '203.0.113.9', 'unknown'] }))).toBe('203.0.113.9');
    expect(clientAddress(request({ ips: ['127.0.0.1', 'not-an-ip', '0x7f.1'] }))).toBe('127.0.0.1');
  });

  it('writes one address one way: IPv4-mapped IPv6 is IPv4, IPv6 compact and lower case, no port', () => {
    expect(clientAddress(request({ ips: ['127.0.0.1', '::ffff:192.0.2.1'] }))).toBe('192.0.2.1');
    expect(clientAddress(request({ ips: ['127.0.0.1', '2001:DB8:0:0::0001'] }))).toBe('2001:db8::1');
    expect(clientAddress(request({ ips: ['127.0.0.1', '[2001:db8::1]:443'] }))).toBe('2001:db8::1');
  });

  it('uses the request address without forwarding, and the socket when Fastify has none that parses', () => {
    expect(clientAddress(request({ ip: '192.0.2.44' }))).toBe('192.0.2.44');
    expect(clientAddress(request({ ip: '', socket: '::ffff:192.0.2.45' }))).toBe('192.0.2.45');
    expect(clientAddress(request({ ip: '', socket: '' }))).toBe('unknown');
  });
});

describe('clientAddressKey', () => {
  it('limits an IPv4 client by its address and an IPv6 client by its /64, so hopping within it does not help', () => {
    expect(clientAddressKey(request({ ip: '192.0.2.44' }))).toBe('192.0.2.44');
    const one = clientAddressKey(request({ ip: '2001:db8:1:2:aaaa::1' }));
    const other = clientAddressKey(request({ ip: '2001:db8:1:2:bbbb::2' }));
    expect(one).toBe('2001:db8:1:2::/64');
    expect(other).toBe(one);
    expect(clientAddressKey(request({ ip: '2001:db8:1:3::1' }))).not.toBe(one);
  });
});
