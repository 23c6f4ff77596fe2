import { DomainError } from '@acct/problem';
import type { FastifyRequest } from 'fastify';

import { MAX_PARAMETER_LENGTH, tokenParameters } from './token-request';

const request = (body: unknown, headers: Record<string, string> = {}) =>
  ({ headers: { 'content-type': 'application/json', ...headers }, body }) as unknown as FastifyRequest;
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

function refusal(run: () => unknown) {
  try {
    run();
  } catch (error) {
    if (error instanceof DomainError) return { code: error.code, error: error.options.extensions?.error };
    throw error;
  }
  throw new Error('the request was accepted');
}

describe('tokenParameters (POST /v2/auth/token)', () => {
  it('reads a JSON or form body, defaults grant_type to password and ignores unknown parameters', () => {
    for (const contentType of ['application/json', 'application/x-www-form-urlencoded']) {
      const parameters = tokenParameters(
        request({ username: 'ada@acme.test', password: 'pw', extra: 'x' }, { 'content-type': contentType }),
      );
      expect(parameters).toMatchObject({ grant_type: 'password', username: 'ada@acme.test', password: 'pw' });
      expect(parameters).not.toHaveProperty('extra');
    }
  });

  it('refuses other media types (415) and bodies that are not objects (400 malformed_body)', () => {
    expect(refusal(() => tokenParameters(request('x', { 'content-type': 'text/plain' })))).toMatchObject({
      code: 'unsupported_media_type',
    });
    expect(refusal(() => tokenParameters(request(['a'])))).toMatchObject({ code: 'malformed_body' });
  });

  it('refuses a parameter sent twice or not as a string, and one over the length limit, as invalid_request', () => {
    expect(refusal(() => tokenParameters(request({ username: ['a', 'b'] })))).toEqual({
      code: 'invalid_request',
      error: 'invalid_request',
    });
    expect(refusal(() => tokenParameters(request({ password: 'x'.repeat(MAX_PARAMETER_LENGTH + 1) })))).toEqual({
      code: 'invalid_request',
      error: 'invalid_request',
    });
    expect(tokenParameters(request({ password: 'x'.repeat(MAX_PARAMETER_LENGTH) })).password).toHaveLength(
      MAX_PARAMETER_LENGTH,
    );
  });

  it('takes client credentials from HTTP Basic, form-urldecoded (RFC 6749 §2.3.1)', () => {
    const parameters = tokenParameters(
      request({ grant_type: 'client_credentials' }, { authorization: basic('my+client', 's%3Acret') }),
    );
    expect(parameters).toMatchObject({ client_id: 'my client', client_secret: 's:cret' });
  });

  it('reads the Basic scheme in any letter case and after more than one space (RFC 7617 §2: 1*SP)', () => {
    const encoded = Buffer.from('web:secret').toString('base64');
    for (const authorization of [`basic ${encoded}`, `Basic  ${encoded}`]) {
      expect(tokenParameters(request({ grant_type: 'client_credentials' }, { authorization }))).toMatchObject({
        client_id: 'web',
        client_secret: 'secret',
      });
    }
  });

  it('refuses credentials in both places, a differing client_id and malformed Basic credentials', () => {
    const header = { authorization: basic('client', 'secret') };
    expect(refusal(() => tokenParameters(request({ client_secret: 'other' }, header)))).toMatchObject({
      code: 'invalid_request',
    });
    expect(refusal(() => tokenParameters(request({ client_id: 'someone-else' }, header)))).toMatchObject({
      code: 'invalid_request',
    });
    const noColon = { authorization: `Basic ${Buffer.from('no-colon').toString('base64')}` };
    expect(refusal(() => tokenParameters(request({}, noColon)))).toEqual({
      code: 'invalid_client',
      error: 'invalid_client',
    });
  });

  it('reads the Basic scheme in any case and after more than one space (RFC 7235 §2.1: 1*SP)', () => {
    const credentials = Buffer.from('client:secret').toString('base64');
    for (const authorization of [`basic ${credentials}`, `BASIC   ${credentials}`]) {
      expect(tokenParameters(request({ grant_type: 'client_credentials' }, { authorization }))).toMatchObject({
        client_id: 'client',
        client_secret: 'secret',
      });
    }
  });

  // A client that sent Basic credentials attempted to authenticate with them: they were ignored when
  // they were no base64 (the request went on as if it had none, even as a public client's).
  it('answers Basic credentials that are no base64, or none at all, as malformed: 401 invalid_client', () => {
    for (const authorization of ['Basic !!!', 'Basic', 'Basic Y2xpZW50OnNlY3JldA==!', 'Basic a b']) {
      expect(
        refusal(() =>
          tokenParameters(request({ grant_type: 'authorization_code', client_id: 'spa' }, { authorization })),
        ),
      ).toEqual({ code: 'invalid_client', error: 'invalid_client' });
    }
  });

  it('answers malformed Basic credentials with a Basic challenge (RFC 6749 §5.2: 401 with WWW-Authenticate)', () => {
    for (const authorization of [
      `Basic ${Buffer.from('no-colon').toString('base64')}`,
      `Basic ${Buffer.from('%E0%A4%A:secret').toString('base64')}`,
    ]) {
      let thrown: unknown;
      try {
        tokenParameters(request({ grant_type: 'client_credentials' }, { authorization }));
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(DomainError);
      expect((thrown as DomainError).status).toBe(401);
      expect((thrown as DomainError).options.headers).toEqual({
        'WWW-Authenticate': expect.stringMatching(/^Basic realm="[^"]+"$/),
      });
    }
  });
});
