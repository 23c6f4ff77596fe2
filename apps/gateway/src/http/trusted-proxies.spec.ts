import { compile } from '@fastify/proxy-addr';
import Fastify from 'fastify';

import { TRUST_MEMORY_SIZE, trustedProxies } from './trusted-proxies';

const SETTING = '127.0.0.1, 10.0.0.0/8, uniquelocal';

describe('trustedProxies', () => {
  it('trusts nobody when TRUSTED_PROXIES names no proxy', () => {
    expect(trustedProxies('')).toBe(false);
    expect(trustedProxies(' , ')).toBe(false);
  });

  it('decides as proxy-addr does, the first time and when it remembers the address', () => {
    const trusts = trustedProxies(SETTING) as (address: string, hop: number) => boolean;
    const reference = compile(['127.0.0.1', '10.0.0.0/8', 'uniquelocal']);
    const addresses = [
      '127.0.0.1',
      '127.0.0.2',
      '10.200.3.4',
      '11.0.0.1',
      'fd00::1',
      '::ffff:10.1.1.1',
      'nonsense',
      '',
    ];
    for (const round of [1, 2]) {
      for (const address of addresses) {
        expect({ round, address, trusted: trusts(address, 0) }).toEqual({
          round,
          address,
          trusted: reference(address, 0),
        });
      }
    }
    expect(trusts('10.200.3.4', 0)).toBe(true);
    expect(trusts('11.0.0.1', 0)).toBe(false);
  });

  it('keeps deciding rightly after more distinct addresses than it remembers', () => {
    const trusts = trustedProxies(SETTING) as (address: string, hop: number) => boolean;
    for (let index = 0; index <= TRUST_MEMORY_SIZE; index += 1) {
      trusts(`192.0.${Math.floor(index / 256) % 256}.${index % 256}`, 1);
    }
    expect(trusts('10.0.0.9', 1)).toBe(true);
    expect(trusts('192.0.2.1', 1)).toBe(false);
  });

  it('gives Fastify the client address the last trusted hop forwarded, not one a client made up', async () => {
    const app = Fastify({ trustProxy: trustedProxies(SETTING) });
    app.get('/', (request) => ({ ip: request.ip, ips: request.ips }));
    try {
      const viaProxies = await app.inject({
        url: '/',
        remoteAddress: '127.0.0.1',
        headers: { 'x-forwarded-for': '198.51.100.7, 203.0.113.9, 10.1.2.3' },
      });
      expect(viaProxies.json()).toEqual({
        ip: '203.0.113.9',
        ips: ['127.0.0.1', '10.1.2.3', '203.0.113.9'],
      });
      const direct = await app.inject({
        url: '/',
        remoteAddress: '203.0.113.50',
        headers: { 'x-forwarded-for': '198.51.100.7' },
      });
      expect(direct.json()).toEqual({ ip: '203.0.113.50', ips: ['203.0.113.50'] });
    } finally {
      await app.close();
    }
  });
});
