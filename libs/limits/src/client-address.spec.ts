import ipaddr from 'ipaddr.js';

import { addressKey, canonicalAddress } from './client-address';

describe('canonicalAddress', () => {
  it.each([
    ['192.0.2.1', '192.0.2.1'],
    ['::ffff:192.0.2.1', '192.0.2.1'],
    ['::FFFF:c000:0201', '192.0.2.1'],
    ['192.0.2.1:8443', '192.0.2.1'],
    [' 192.0.2.1 ', '192.0.2.1'],
    ['2001:0DB8:0000:0000:0000:0000:0000:0001', '2001:db8::1'],
    ['2001:db8:0:0::1', '2001:db8::1'],
    ['[2001:db8::1]:443', '2001:db8::1'],
    ['[2001:db8::1]', '2001:db8::1'],
    ['fe80::1%eth0', 'fe80::1'],
  ])('writes %j as %j', (value, canonical) => {
    expect(canonicalAddress(value)).toBe(canonical);
  });

  it.each([
    '',
    'unknown',
    'garbage',
    '1.2.3',
    '3232235777',
    '0x7f.0.0.1',
    '010.0.0.1',
    '256.0.0.1',
    '::g',
    '1.2.3.4:port',
    '[::1',
  ])('refuses %j, which is not an address', (value) => {
    expect(canonicalAddress(value)).toBeUndefined();
  });

  it('answers every dotted IPv4 address as ipaddr.js writes it, and refuses the ones it refuses', () => {
    const parts = ['0', '1', '9', '10', '09', '99', '100', '199', '200', '249', '250', '255', '256', '300', '1000'];
    for (const a of parts)
      for (const b of parts) {
        const value = `${a}.${b}.${b}.${a}`;
        const expected = ipaddr.IPv4.isValidFourPartDecimal(value) ? ipaddr.IPv4.parse(value).toString() : undefined;
        expect([value, canonicalAddress(value)]).toEqual([value, expected]);
      }
  });
});

describe('addressKey', () => {
  it('keys IPv4 by the address and IPv6 by its /64', () => {
    expect(addressKey('192.0.2.1')).toBe('192.0.2.1');
    expect(addressKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:db8:1:2:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:db8:1:3::1')).not.toBe(addressKey('2001:db8:1:2::1'));
  });
});
