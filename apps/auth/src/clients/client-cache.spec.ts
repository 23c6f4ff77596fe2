import { Revocations } from '@acct/revocation';

import { loadAuthConfig } from '../config';
import { OAuthClient } from './client.repository';
import { CLIENT_NOTICE_TOPIC, ClientCache } from './client-cache';

const client = (secretHash: string): OAuthClient => ({
  id: 'client-1',
  orgId: 'org-1',
  name: 'server',
  type: 'confidential',
  secretHash,
  grantTypes: ['client_credentials'],
  redirectUris: [],
  scopes: ['users:read'],
  roles: ['member'],
});

/** The revocations' notice channel as the cache uses it: announcements and the handler of other processes' notices. */
class Notices {
  announced: Array<[string, string]> = [];
  handlers = new Map<string, (message: string) => void>();
  announce = (topic: string, message: string) => void this.announced.push([topic, message]);
  onNotice = (topic: string, handler: (message: string) => void) => void this.handlers.set(topic, handler);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('ClientCache', () => {
  let notices: Notices;
  let cache: ClientCache;
  let stored: OAuthClient | null;
  let loads: number;
  const load = () => {
    loads += 1;
    return Promise.resolve(stored);
  };

  /** A cache whose TTL no test outlives unless it waits for that on purpose (a loaded CI machine is slow). */
  const cacheWith = (ttlMs: number) => {
    const made = new ClientCache(
      notices as unknown as Revocations,
      loadAuthConfig({ CLIENT_CACHE_TTL_MS: `${ttlMs}` }),
    );
    made.onModuleInit();
    return made;
  };

  beforeEach(() => {
    notices = new Notices();
    cache = cacheWith(60_000);
    stored = client('hash-1');
    loads = 0;
  });

  it('reads a client from the database once within the TTL', async () => {
    await cache.get('client-1', load);
    expect(await cache.get('client-1', load)).toMatchObject({ secretHash: 'hash-1' });
    expect(loads).toBe(1);
  });

  it('reads it again once the TTL is over, so a lost notice costs at most the TTL', async () => {
    cache = cacheWith(50);
    await cache.get('client-1', load);
    stored = client('hash-2');
    await sleep(70);
    expect(await cache.get('client-1', load)).toMatchObject({ secretHash: 'hash-2' });
    expect(loads).toBe(2);
  });

  it('does not remember an unknown client (a new one works at once)', async () => {
    stored = null;
    await cache.get('client-1', load);
    stored = client('hash-1');
    expect(await cache.get('client-1', load)).toMatchObject({ id: 'client-1' });
  });

  it('drops a changed client at once here and announces the change to the other processes', async () => {
    await cache.get('client-1', load);
    stored = client('hash-2');
    cache.changed('client-1');
    expect(await cache.get('client-1', load)).toMatchObject({ secretHash: 'hash-2' });
    expect(notices.announced).toEqual([[CLIENT_NOTICE_TOPIC, 'client-1']]);
  });

  it("drops a client on another process's notice", async () => {
    await cache.get('client-1', load);
    stored = null; // deleted elsewhere
    notices.handlers.get(CLIENT_NOTICE_TOPIC)!('client-1');
    expect(await cache.get('client-1', load)).toBeNull();
  });

  it('does not store what a read saw when a change came while it ran', async () => {
    let finish!: (value: OAuthClient) => void;
    const slow = cache.get('client-1', () => new Promise<OAuthClient>((resolve) => (finish = resolve)));
    cache.changed('client-1'); // committed while the read was under way: its result may be the old row
    finish(client('hash-old'));
    expect(await slow).toMatchObject({ secretHash: 'hash-old' });
    stored = client('hash-new');
    expect(await cache.get('client-1', load)).toMatchObject({ secretHash: 'hash-new' });
  });
});
