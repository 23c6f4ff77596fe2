import { discoveryPaths } from '../http/well-known';
import { publicAuthorizePath } from './authorize.controller';
import { metadataFor } from './discovery.controller';

describe('an issuer written with a terminating slash', () => {
  // Some deployments name their issuer `https://example.com/` or `https://example.com/tenant/`: it is
  // kept as written where clients compare it byte for byte (discovery's `issuer`, RFC 8414 §3.3, and
  // every token's `iss`), and every URL and path built on it has no double slash.
  it.each([
    ['https://id.example.test/', '', '/.well-known/oauth-authorization-server'],
    ['https://id.example.test/tenant/', '/tenant', '/.well-known/oauth-authorization-server/tenant'],
  ])('%s: the metadata keeps it as the issuer and builds every endpoint under its path', (issuer, path, wellKnown) => {
    const metadata = metadataFor(issuer);
    expect(metadata.issuer).toBe(issuer);
    expect(metadata.token_endpoint).toBe(`https://id.example.test${path}/v2/auth/token`);
    expect(metadata.authorization_endpoint).toBe(`https://id.example.test${path}/v2/auth/authorize`);
    expect(metadata.jwks_uri).toBe(`https://id.example.test${path}/v2/auth/jwks`);
    expect(discoveryPaths(issuer)).toContain(wellKnown);
    expect(publicAuthorizePath(issuer)).toBe(`${path}/v2/auth/authorize`);
  });
});
