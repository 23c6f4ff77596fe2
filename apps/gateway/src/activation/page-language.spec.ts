import { pageLanguage } from './activation-page.controller';

describe('the activation page language', () => {
  it("takes the link's lang first, matching a language by its primary tag", () => {
    expect(pageLanguage('zh-CN', 'en-GB')).toBe('zh-CN');
    expect(pageLanguage('zh-cn', undefined)).toBe('zh-CN');
    expect(pageLanguage('zh', undefined)).toBe('zh-CN');
    expect(pageLanguage('en', 'zh-CN')).toBe('en');
  });

  it('else the best-ranked language of Accept-Language it speaks, else English', () => {
    expect(pageLanguage(undefined, 'fr-FR, zh-TW;q=0.8, en;q=0.5')).toBe('zh-CN');
    expect(pageLanguage('', 'en;q=0.4, zh-CN;q=0.9')).toBe('zh-CN');
    expect(pageLanguage('xx', 'de, *;q=0.1')).toBe('en');
    expect(pageLanguage(['zh-CN'], 'zh-CN;q=0')).toBe('en');
  });
});
