import { isSessionEndingEvent, sessionEndingEvent, USER_CREATED, USER_DELETED, USER_PASSWORD_CHANGED } from './index';

const event = {
  id: '7f1f3a52-4c1e-4d7b-9a43-0d2b8c1e9a10',
  type: USER_PASSWORD_CHANGED,
  version: 1,
  occurred_at: '2026-11-23T10:00:00.000Z',
  data: {
    user_id: '0b6f7c8e-3f43-4c1c-9a52-0a4a0f3c2d11',
    org_id: '9b2f4c1e-8d3a-4f5b-a6c7-d8e9f0a1b2c3',
    occurred_at: '2026-11-23T10:00:00.000Z',
  },
};

describe('session-ending events (password changed, disabled, deleted)', () => {
  it('share one data shape under their own types', () => {
    expect(sessionEndingEvent(USER_PASSWORD_CHANGED).parse(event).data.user_id).toBe(event.data.user_id);
    expect(sessionEndingEvent(USER_DELETED).parse({ ...event, type: USER_DELETED }).type).toBe(USER_DELETED);
    expect(sessionEndingEvent(USER_DELETED).safeParse(event).success).toBe(false);
  });

  it.each([
    ['no occurred_at in data', { ...event, data: { ...event.data, occurred_at: undefined } }],
    ['a user id that is not a UUID', { ...event, data: { ...event.data, user_id: 'someone' } }],
    ['an extra field', { ...event, data: { ...event.data, email: 'a@b.test' } }],
  ])('refuses %s', (_, candidate) => {
    expect(sessionEndingEvent(USER_PASSWORD_CHANGED).safeParse(candidate).success).toBe(false);
  });

  it('tells them from the other identity events', () => {
    expect(isSessionEndingEvent(USER_PASSWORD_CHANGED)).toBe(true);
    expect(isSessionEndingEvent(USER_CREATED)).toBe(false);
  });
});
