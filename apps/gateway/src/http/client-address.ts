import { addressKey, canonicalAddress } from '@acct/limits';
import type { FastifyRequest } from 'fastify';

/**
 * The client's address in its one canonical form (`@acct/limits` `canonicalAddress`): the address
 * Fastify found (the socket's, or what the trusted proxies in TRUSTED_PROXIES forwarded in
 * X-Forwarded-For). A forwarded value that is not an address (`unknown`, garbage) is ignored: the
 * request counts as coming from the hop that forwarded it, the way it would without the header.
 */
export function clientAddress(request: FastifyRequest): string {
  const hops = request.ips ?? [request.ip];
  for (let index = hops.length - 1; index >= 0; index -= 1) {
    const canonical = canonicalAddress(hops[index]);
    if (canonical) return canonical;
  }
  return socketAddress(request.socket.remoteAddress);
}

/** A socket's peer address in its canonical form (`unknown` when it has none that parses). */
export function socketAddress(remoteAddress: string | undefined): string {
  return canonicalAddress(remoteAddress ?? '') ?? 'unknown';
}

/** The key of the client's per-IP rate limits: its IPv4 address, or its IPv6 /64. */
export function clientAddressKey(request: FastifyRequest): string {
  return addressKey(clientAddress(request));
}
