import { RouteTable } from './route-table';

describe('RouteTable', () => {
  const table = new RouteTable();
  table.add('GET', '/v2/users/:id');
  table.add(['POST', 'HEAD'], '/v2/users');
  table.add('GET', '/v2/users/me');

  it('lists the methods of a known path, query string ignored', () => {
    expect(table.allowed('/v2/users')).toEqual(['POST']);
    expect(table.allowed('/v2/users/me?x=1')).toEqual(['GET']);
    expect(table.allowed('/v2/users/123')).toEqual(['GET']);
  });

  it('knows nothing of unknown paths', () => {
    expect(table.allowed('/v2/nope')).toEqual([]);
    expect(table.allowed('/v2/users/1/2')).toEqual([]);
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
