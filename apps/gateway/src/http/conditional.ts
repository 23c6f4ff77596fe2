/**
 * RFC 9110 §13.1.2: whether `If-None-Match` matches the representation whose entity tag is `etag`, so
 * a GET answers 304. `*` matches any current representation; otherwise the field is a list of tags,
 * compared weakly (`W/"x"` matches `"x"`: a proxy that compresses marks the tag it passes on weak).
 */
export function ifNoneMatchMatches(field: string | undefined, etag: string): boolean {
  if (field === undefined) return false;
  if (field.trim() === '*') return true;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  return field.split(',').some((tag) => opaque(tag) === opaque(etag));
}
