import { EVENT_SCHEMAS, PASSWORD_RESET_REQUESTED, passwordResetRequested, usageReported } from './envelope';

const valid = {
  id: '7f1f3a52-4c1e-4d7b-9a43-0d2b8c1e9a10',
  type: 'platform.usage.reported',
  version: 1,
  occurred_at: '2026-11-22T10:00:00.000Z',
  data: { org_id: 'org-1', dimension: 'compute', name: 'vCPU cores', used: 12.5 },
};

describe('platform.usage.reported v1', () => {
  it('accepts a well-formed event', () => {
    expect(usageReported.parse(valid).data.used).toBe(12.5);
  });

  it.each([
    ['an unknown version', { ...valid, version: 2 }],
    ['a negative usage', { ...valid, data: { ...valid.data, used: -1 } }],
    ['a name of another dimension', { ...valid, data: { ...valid.data, name: 'Egress traffic' } }],
    ['an unknown dimension', { ...valid, data: { ...valid.data, dimension: 'api' } }],
    ['an extra field', { ...valid, data: { ...valid.data, extra: true } }],
    ['no id', { ...valid, id: undefined }],
  ])('refuses %s', (_, event) => {
    expect(usageReported.safeParse(event).success).toBe(false);
  });
});

describe('event schemas', () => {
  it('has one schema per event type, each accepting only its own type', () => {
    for (const [type, schema] of Object.entries(EVENT_SCHEMAS)) {
      const shape = (schema as unknown as { shape: { type: { value: string } } }).shape;
      expect(shape.type.value).toBe(type);
    }
  });

  it('reads a password-reset request as identity writes it, and one whose token identity withdrew (its user deleted)', () => {
    const event = {
      id: '0d5b6a3e-1c2d-4e5f-8a9b-0c1d2e3f4a5b',
      type: PASSWORD_RESET_REQUESTED,
      version: 1,
      occurred_at: '2026-01-01T00:00:00.000Z',
      data: {
        user_id: '3f0e4c1a-5b8e-4c33-9a53-1f2b3c4d5e6f',
        org_id: 'org-1',
        email: 'ada@example.test',
        display_name: 'Ada',
        locale: 'en',
        token: 'secret',
        expires_at: '2026-01-02T00:00:00.000Z',
      },
    };
    expect(passwordResetRequested.parse(event).data.token).toBe('secret');
    const { token: _token, ...withoutToken } = event.data;
    expect(passwordResetRequested.parse({ ...event, data: withoutToken }).data).toEqual(withoutToken);
  });
});
