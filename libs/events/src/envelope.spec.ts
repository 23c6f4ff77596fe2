import { usageReported } from './envelope';

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
