/** `grpc.service_config` that spreads calls over every connected address of a channel. */
const ROUND_ROBIN = JSON.stringify({ loadBalancingConfig: [{ round_robin: {} }] });

/**
 * How an address setting (`*_GRPC_ADDR`) becomes a grpc-js channel target, always balanced
 * round-robin over every address the target resolves to, so a process spreads its calls over the
 * instances of a service and skips one that is away, without a proxy:
 * - `dns:///identity-grpc.ns.svc.cluster.local:50051` (or a plain `host:port`, which grpc-js resolves
 *   by DNS too): every address the name has — a Kubernetes headless Service lists every ready pod.
 *   The name is resolved again when a connection ends (servers close them after
 *   `GRPC_MAX_CONNECTION_AGE_MS`, see grpcServerChannelOptions), so pods added later get calls.
 * - a comma-separated list of IPv4 `ip:port`: an `ipv4:` target of exactly those instances.
 */
export function grpcChannelTarget(address: string): { target: string; channelOptions: Record<string, string> } {
  const addresses = address
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part.length > 0);
  const target = addresses.length > 1 ? `ipv4:${addresses.join(',')}` : (addresses[0] ?? address);
  return { target, channelOptions: { 'grpc.service_config': ROUND_ROBIN } };
}
