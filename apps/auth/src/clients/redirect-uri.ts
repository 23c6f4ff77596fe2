/**
 * Redirect URIs (contract §6): compared as exact strings, never parsed and normalised first (a parser
 * would make `https://App.example` equal `https://app.example`, or drop an empty query). The one
 * exception is RFC 8252 §7.3: for `http` on a loopback host the port is ignored, because a native
 * app listens on whatever port the system gives it.
 */

/** `http://<loopback host>[:port]<rest>`, exactly as written (lower-case scheme and host only). */
const LOOPBACK = /^http:\/\/(127\.0\.0\.1|\[::1\]|localhost)(?::\d{1,5})?([/?][^#]*)?$/;

const MAX_LENGTH = 512;
/**
 * The characters of an RFC 3986 URI (unreserved, reserved and `%`): any other (non-ASCII, white
 * space, `"<>\\^`{|}`) must be percent-encoded. A redirect URI holding one cannot be sent back in a
 * `Location` header (Node refuses characters beyond U+00FF there), so it is no redirect URI.
 */
const URI_CHARACTERS = /^[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]*$/;

/** What is wrong with `uri` as a redirect URI to register, or undefined when it may be registered. */
export function redirectUriProblem(uri: string): string | undefined {
  if (uri.length === 0 || uri.length > MAX_LENGTH) return `must be 1–${MAX_LENGTH} characters`;
  if (!URI_CHARACTERS.test(uri)) {
    return `${uri} holds a character no URI holds (RFC 3986: white space, a non-ASCII character, "<>\\^\`{|}); percent-encode it`;
  }
  let parsed: URL;
  try {
    parsed = new URL(uri);
  } catch {
    return `${uri} is not an absolute URI`;
  }
  if (uri.includes('#')) return `${uri} has a fragment (RFC 6749 §3.1.2)`;
  if (parsed.username || parsed.password || /^[a-z]+:\/\/[^/?]*@/i.test(uri)) return `${uri} has user information`;
  // Exact string matching: only the canonical spelling of scheme and host can ever match.
  if (!uri.startsWith(`${parsed.protocol}//${parsed.host}`)) {
    return `${uri} must be written in canonical form (lower-case scheme and host)`;
  }
  if (parsed.protocol === 'https:') return undefined;
  if (parsed.protocol === 'http:' && LOOPBACK.test(uri)) return undefined;
  return `${uri} must use https, or http on a loopback host (127.0.0.1, [::1], localhost)`;
}

/** Whether `presented` is one of `registered`: the same string, or the same loopback URI on another port. */
export function redirectUriRegistered(registered: readonly string[], presented: string): boolean {
  // One registered before its characters were checked matches nothing: the request gets the error page.
  if (!URI_CHARACTERS.test(presented)) return false;
  const loopback = withoutLoopbackPort(presented);
  return registered.some(
    (uri) => uri === presented || (loopback !== undefined && withoutLoopbackPort(uri) === loopback),
  );
}

function withoutLoopbackPort(uri: string): string | undefined {
  const match = LOOPBACK.exec(uri);
  return match ? `http://${match[1]}${match[2] ?? ''}` : undefined;
}
