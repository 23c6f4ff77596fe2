/** `grpc.service_config` that spreads calls over every connected address of a channel. */
const ROUND_ROBIN = JSON.stringify({ loadBalancingConfig: [{ round_robin: {} }] });

/**
 * How an address setting (`*_GRPC_ADDR`) becomes a grpc-js channel target: one `host:port` stays as
 * it is (resolved by DNS, first address that answers); a comma-separated list of IPv4 `ip:port`
 * becomes an `ipv4:` target balanced round-robin over the instances that are connected, so a process
 * spreads its calls over several instances of a service, and skips one that is away, without a proxy.
 */
export function grpcChannelTarget(address: string): { target: string; channelOptions: Record<string, string> } {
  const addresses = address
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part.length > 0);
  if (addresses.length <= 1) return { target: addresses[0] ?? address, channelOptions: {} };
  return { target: `ipv4:${addresses.join(',')}`, channelOptions: { 'grpc.service_config': ROUND_ROBIN } };
}
