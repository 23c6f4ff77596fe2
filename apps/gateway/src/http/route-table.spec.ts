import { RouteTable } from './route-table';

describe('RouteTable', () => {
  const table = new RouteTable();
  table.add('GET', '/v2/users/:id');
  table.add(['POST', 'OPTIONS'], '/v2/users');
  table.add('GET', '/v2/users/me');

  it('lists the methods of a known path, query string ignored: HEAD wherever GET is, never OPTIONS', () => {
    expect(table.allowed('/v2/users')).toEqual(['POST']);
    expect(table.allowed('/v2/users/me?x=1')).toEqual(['GET', 'HEAD']);
    expect(table.allowed('/v2/users/123')).toEqual(['GET', 'HEAD']);
  });

  it('reads a path as the router does: percent-encoded characters decoded, reserved ones left as they are', () => {
    // RFC 3986 §6.2.2.2: `%6D` is `m`; the router serves GET /v2/users/%6De as /v2/users/me.
    expect(table.allowed('/v2/users/%6De')).toEqual(['GET', 'HEAD']);
    expect(table.allowed('/v2/%75sers')).toEqual(['POST']);
    // An encoded slash is no separator (another path), and a broken escape names nothing.
    expect(table.allowed('/v2%2Fusers')).toEqual([]);
    expect(table.allowed('/v2/%75sers%ZZ')).toEqual([]);
  });

  it('reads a request target in absolute form by its path, as the router does (RFC 9112 §3.2.2)', () => {
    expect(table.allowed('http://gateway.example:8080/v2/users?x=1')).toEqual(['POST']);
    expect(table.allowed('https://gateway.example/v2/users/me')).toEqual(['GET', 'HEAD']);
  });

  it('knows nothing of unknown paths', () => {
    expect(table.allowed('/v2/nope')).toEqual([]);
    expect(table.allowed('/v2/users/1/2')).toEqual([]);
  });
});

describe('RouteTable: a path a route names literally', () => {
  const table = new RouteTable();
  table.add(['GET', 'HEAD'], '/v2/users/me');
  table.add('GET', '/v2/users/:id');
  table.add('PATCH', '/v2/users/:id');
  table.add('DELETE', '/v2/users/:id');

  it("has the literal route's methods alone, though parametric ones of other methods match it", () => {
    expect(table.allowed('/v2/users/me')).toEqual(['GET', 'HEAD']);
    expect(table.allowed('/v2/users/%6De')).toEqual(['GET', 'HEAD']);
    expect(table.allowed('/v2/users/123')).toEqual(['DELETE', 'GET', 'HEAD', 'PATCH']);
  });

  it('refuses what the router matched to a parametric route there, and nothing else', () => {
    expect(table.refusedOn('PATCH', '/v2/users/me')).toEqual(['GET', 'HEAD']);
    expect(table.refusedOn('DELETE', '/v2/users/me?x=1')).toEqual(['GET', 'HEAD']);
    expect(table.refusedOn('GET', '/v2/users/me')).toBeUndefined();
    expect(table.refusedOn('HEAD', '/v2/users/me')).toBeUndefined();
    expect(table.refusedOn('PATCH', '/v2/users/123')).toBeUndefined();
  });
});

describe('RouteTable path shapes', () => {
  const table = new RouteTable();
  table.add('GET', '/v2/system/health');
  table.add('GET', '/v2/users/:id');

  it.each([
    '/v2/system/health/',
    '/v2/users/me/',
    '//v2/system/health',
    '/v2//system/health',
    '/V2/system/health',
    '/v2/system/health/.',
  ])('knows nothing of %s, which the router does not route either', (path) => {
    expect(table.allowed(path)).toEqual([]);
  });
});
