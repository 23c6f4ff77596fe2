import { compile } from '@fastify/proxy-addr';

/** Addresses whose trust is remembered; past this many, the memory starts over. */
export const TRUST_MEMORY_SIZE = 10_000;

/**
 * Fastify's `trustProxy` for TRUSTED_PROXIES (comma-separated addresses, CIDR ranges or proxy-addr's
 * names `loopback`, `linklocal`, `uniquelocal`), false when none is set. The decisions are proxy-addr's
 * own, remembered per address: Fastify asks for every hop each time a request's `ip` or `ips` is read
 * (the rate-limit key, the token request's client address, the access log), and proxy-addr parses the
 * address again each time (4 % of the gateway's time on `health`, bench/results/profiles.md). A
 * decision depends on the address alone, never on the hop's position.
 */
export function trustedProxies(setting: string): ((address: string, hop: number) => boolean) | false {
  const proxies = setting
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  if (proxies.length === 0) return false;
  const trusts = compile(proxies);
  const decisions = new Map<string, boolean>();
  return (address, hop) => {
    let trusted = decisions.get(address);
    if (trusted === undefined) {
      trusted = trusts(address, hop);
      if (decisions.size >= TRUST_MEMORY_SIZE) decisions.clear();
      decisions.set(address, trusted);
    }
    return trusted;
  };
}
